// `omnilearn validate` end to end on a small BSP scenario (two LeNet workers, 1024 Fashion-MNIST samples, 2 epochs):
// two real testbed runs under cgroup CPU quotas (--repeats 2), the exchange probe, the simulator with a given
// calibration (--skip-calibrate: a calibration takes minutes) and the comparison. Checks the stages' folders and
// validation.csv, including the repeat and energy columns. Needs root (cgroups), Fashion-MNIST and Debian's python3
// with pandas; skips with the reason otherwise.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

// Runs argv (no shell) with stdout and stderr into `log`; its exit code (-1 if it could not start or was killed).
int run_logged(const std::vector<std::string>& argv, const std::string& log) {
  SpawnOptions options;
  options.stdout_file = options.stderr_file = log;
  auto status = Subprocess::run(argv, options);
  return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

std::string read_file(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

// validation.csv as rows of column -> cell.
std::vector<std::map<std::string, std::string>> read_table(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  std::getline(in, line);
  for (std::stringstream ss(line); std::getline(ss, line, ',');) header.push_back(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream ss(line);
    for (const std::string& column : header) {
      std::string cell;
      std::getline(ss, cell, ',');
      row[column] = cell;
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(Validate, TwoTestbedRunsTheProbeAndTheSimulatorAreCompared) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (cgroups)";
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  if (const Status access = check_cgroup_access(); !access.is_ok()) {
    GTEST_SKIP() << "no cgroup write access: " << access.message();
  }
  if (run_logged({"/usr/bin/python3", "-c", "import pandas"}, "/dev/null") != 0) {
    GTEST_SKIP() << "Debian's python3 has no pandas: install python3-pandas (scripts/setup.sh does)";
  }
  const std::string dir = testing::fresh_dir("validate");
  // The workers' compute is emulated at 1 ms of CPU per sample (emulator.sample_cost_s), so the calibration below
  // describes every host: t = 0 + 0.001 s x b at a full core, and a share s runs at s of that speed. (A calibration
  // written by hand for the bare network would describe only the host it was measured on.)
  const std::string scenario = testing::write_scenario(
      dir, "val", 2,
      "emulator: {cpu_budget: 1.0, eval_samples: 500, target_accuracy: 0, sample_cost_s: 0.001}\n"
      "energy: {cpu: {idle: 1, busy: 5}}\n",
      1024, 64, 2);
  fs::create_directories(dir + "/cal");
  std::ofstream(dir + "/cal/profile.yaml") << "name: lenet-calibrated\nparameters: 22310\nflops_per_sample: 2.3e6\n"
                                              "flops_per_iteration: 0\nmeasured_fixed_s: 0\n"
                                              "measured_per_sample_s: 0.001\n";
  std::ofstream(dir + "/cal/fidelity.csv") << "target_share,achieved_share,throughput_samples_s,relative_throughput,"
                                              "slowdown\n0.5,0.5,500,0.5,2\n1,1,1000,1,1\n";
  const std::string out = dir + "/out";
  const int rc = run_logged({OMNILEARN_CLI, "validate", scenario, "--out", out, "--skip-calibrate", dir + "/cal",
                             "--repeats", "2"},
                            dir + "/validate.log");
  std::printf("%s", read_file(dir + "/validate.log").c_str());
  ASSERT_EQ(rc, 0);
  for (const char* run : {"testbed", "testbed-2", "probe", "sim"}) {
    EXPECT_TRUE(fs::exists(out + "/" + run + "/summary.json")) << run;
  }
  const std::string profile = read_file(out + "/sim-profile.yaml");
  EXPECT_NE(profile.find("allreduce_fixed_s:"), std::string::npos) << profile;
  EXPECT_NE(profile.find("compute_noise:"), std::string::npos) << profile;  // the probe's noise per share, by default
  const std::string verdict = read_file(out + "/energy-verdict.json");
  EXPECT_NE(verdict.find("\"judged\": false"), std::string::npos) << verdict;
  const auto rows = read_table(out + "/validation.csv");
  ASSERT_EQ(rows.size(), 3u);  // workers 0 and 1, "all"
  EXPECT_EQ(rows[0].at("worker"), "0");
  EXPECT_EQ(rows[2].at("worker"), "all");
  for (const auto& row : rows) {
    for (const char* column : {"mean_iter_error_pct", "max_iter_error_pct", "repeat_mean_error_pct",
                               "repeat_max_error_pct", "runs_mean_error_pct", "noise_floor_pct"}) {
      ASSERT_FALSE(row.at(column).empty()) << column;
      const double value = std::stod(row.at(column));
      EXPECT_TRUE(std::isfinite(value) && value >= 0.0) << column << " = " << row.at(column);
    }
    // Both back ends ran the same 32 steps: the simulator's mean is within a factor of two of the testbed's.
    const double tb = std::stod(row.at("testbed_iter_s")), sim = std::stod(row.at("sim_iter_s"));
    EXPECT_GT(sim, 0.5 * tb);
    EXPECT_LT(sim, 2.0 * tb);
    // The runs' energy: the testbed's measured (RAPL) or modelled from its workers' CPU time; never judged here:
    // the calibration has no host-power.json (energy-verdict.json says so), and a modelled figure is not judged
    // anyway. Both within a factor of two of each other, as the times are.
    const std::string source = row.at("energy_source");
    EXPECT_TRUE(source == "modelled-cputime" || source == "measured") << source;
    EXPECT_EQ(row.at("energy_within_15pct"), source == "modelled-cputime" ? "modelled" : "refused");
    const double tb_j = std::stod(row.at("testbed_energy_j")), sim_j = std::stod(row.at("sim_energy_j"));
    EXPECT_GT(tb_j, 0.0);
    if (source == "modelled-cputime") {
      EXPECT_GT(sim_j, 0.5 * tb_j);
      EXPECT_LT(sim_j, 2.0 * tb_j);
    }
  }
}

}  // namespace
}  // namespace omnilearn::emulator
