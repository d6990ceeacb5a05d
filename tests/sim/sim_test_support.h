// Helpers for the simulator tests: scenarios built in code, a run in a child process (SimGrid allows one engine
// per process, and some tests compare two runs), and readers for the run folder's files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "omnilearn/scenarios/model_catalog.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/simulation.h"

namespace omnilearn::sim::testing {

// An epoch-schedule phase: from epoch `at` on, worker k runs at fractions[k] of its speed.
inline scenarios::AvailabilityPhase phase(double at, std::vector<double> fractions) {
  scenarios::AvailabilityPhase p;
  p.at = at;
  p.fractions = std::move(fractions);
  return p;
}

// The arguments a simulation gives SimGrid by default (SimOptions' settings after a program name), kept alive for
// an Engine built from them in a test's child process.
struct DefaultEngineArgs {
  std::vector<std::string> args{"test"};
  std::vector<char*> argv;
  int argc = 0;
  DefaultEngineArgs() {
    for (const std::string& a : SimOptions{}.simgrid_args) args.push_back(a);
    for (std::string& a : args) argv.push_back(a.data());
    argc = static_cast<int>(argv.size());
  }
};

// `cores` workers' worth of a 10 Gflop/s core each, ResNet18 on CIFAR-10, B = 128, bounds 16..96.
inline scenarios::Scenario four_worker_scenario(const std::vector<int>& cores, const std::string& policy) {
  scenarios::Scenario s;
  s.name = "test";
  for (std::size_t k = 0; k < cores.size(); ++k) {
    scenarios::NodeSpec node;
    node.name = std::string("n").append(std::to_string(k));
    node.cores = cores[k];
    node.speed_flops = 10e9 * cores[k];
    node.bandwidth_Bps = 1.25e9;
    node.latency_s = 1e-5;
    s.cluster.workers.push_back(node);
  }
  s.cluster.parameter_server.name = "ps";
  s.cluster.parameter_server.speed_flops = 1e10;
  s.workload.model = *scenarios::find_model("resnet18", /*small_images=*/true);
  s.workload.global_batch = 128;
  s.workload.dataset_samples = 128 * 50;  // 50 steps per epoch
  s.workload.epochs = 1;
  s.policy.name = policy;
  s.policy.min_batch = 16;
  s.policy.max_batch = 96;
  s.policy.every_n = 5;
  s.seed = 7;
  return s;
}

inline std::string test_dir(const std::string& leaf) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "omnilearn_sim" / info->test_suite_name() / info->name() / leaf;
  std::filesystem::remove_all(dir);
  return dir.string();
}

// Runs `body` in a forked child (its own SimGrid engine: one per process); returns the error message it returns,
// empty on success. The child has 120 s: a hung simulation fails the test instead of stalling the suite.
template <typename Body>
std::string run_forked(Body body) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(120);
    const std::string msg = body();
    if (!msg.empty() && write(fds[1], msg.data(), msg.size()) < 0) _exit(3);
    _exit(msg.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus)) return std::string("child crashed, signal ").append(std::to_string(WTERMSIG(wstatus)));
  if (WEXITSTATUS(wstatus) != 0 && msg.empty()) return std::string("child exited with ").append(std::to_string(WEXITSTATUS(wstatus)));
  return msg;
}

// Runs the scenario in a forked child writing to `dir`; returns the child's error message, empty on success.
inline std::string run_in_child(const scenarios::Scenario& scenario, const std::string& dir,
                                SimOptions options = {}) {
  options.output_dir = dir;
  return run_forked([&] {
    auto result = run_simulation(scenario, options);
    return result ? std::string() : result.status().message();
  });
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using CsvRow = std::map<std::string, std::string>;
inline std::vector<CsvRow> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::stringstream ss(l);
    for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
    if (!l.empty() && l.back() == ',') out.emplace_back();
    return out;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split(line);
    CsvRow row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// A number from summary.json: `"key": value` (first occurrence).
inline double summary_number(const std::string& dir, const std::string& key) {
  const std::string text = read_text(dir + "/summary.json");
  const auto at = text.find(std::string("\"").append(key).append("\""));
  if (at == std::string::npos) return -1.0;
  const auto colon = text.find(':', at);
  return std::stod(text.substr(colon + 1));
}

// Mean of a numeric column over rows where `filter_column == filter_value` (all rows when filter_column is "").
inline double mean_column(const std::vector<CsvRow>& rows, const std::string& column, const std::string& filter_column = "",
                          const std::string& filter_value = "") {
  double sum = 0.0;
  int n = 0;
  for (const auto& r : rows) {
    if (!filter_column.empty() && r.at(filter_column) != filter_value) continue;
    sum += std::stod(r.at(column));
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

}  // namespace omnilearn::sim::testing
