// `omnilearn validate`: the simulator against the real testbed on one scenario. Calibrates the model on this host,
// runs the testbed and the simulator on the same scenario, and compares them (analysis/omnilearn_analysis/validate.py).
// Each stage is this same binary (or python3) started with posix_spawn; no shell is involved.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/validate_profile.h"
#include "omnilearn/base/format.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/sim/quota_wait.h"

extern char** environ;

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;

constexpr int kProbeSteps = 80;  // the exchange probe: a short uniform run of the scenario

// Logs `words` and starts them (words[0] is the program) with this process's environment plus `extra_env` (which
// replaces variables of the same name); returns the child's pid, or -1 when it could not start.
pid_t spawn_logged(std::vector<std::string> words, const std::vector<std::string>& extra_env = {}) {
  std::cerr << "omnilearn validate: running";
  for (const std::string& w : words) std::cerr << " " << w;
  std::cerr << "\n";
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_store = extra_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    bool replaced = false;
    for (const std::string& x : extra_env) replaced |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    if (!replaced) env_store.push_back(kv);
  }
  std::vector<char*> envp;
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, words[0].c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
  return pid;
}

// The exit code of a waited-for child: its own, or 128 + the signal that ended it.
int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// spawn_logged, then waits; returns the exit code (127: could not start).
int spawn_and_wait(std::vector<std::string> words, const std::vector<std::string>& extra_env = {}) {
  const pid_t pid = spawn_logged(std::move(words), extra_env);
  if (pid < 0) return 127;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 1;
  return exit_code(status);
}

// CPU seconds the whole host has spent busy (/proc/stat: all but idle and iowait); < 0 when unreadable.
double host_busy_s() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  if (!(in >> cpu) || cpu != "cpu") return -1.0;
  for (double& x : v) in >> x;
  return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds used by the testbed run's cgroup (v1 cpuacct or v2 cpu.stat); < 0 when unreadable.
double cgroup_usage_s(const std::string& folder) {
  for (const char* mount : {"/sys/fs/cgroup/cpuacct/", "/sys/fs/cgroup/cpu,cpuacct/"}) {
    std::ifstream in(mount + folder + "/cpuacct.usage");
    double ns = 0.0;
    if (in >> ns) return ns * 1e-9;
  }
  std::ifstream in("/sys/fs/cgroup/" + folder + "/cpu.stat");
  std::string key;
  double value = 0.0;
  while (in >> key >> value) {
    if (key == "usage_usec") return value * 1e-6;
  }
  return -1.0;
}

// Runs the testbed (`words`) and, while its workers train, measures the host CPU that other processes use; returns
// the exit code and sets `available_cores` to the host's cores minus that load (0 when it could not be measured).
int run_testbed_measuring_load(std::vector<std::string> words, const fs::path& run, double& available_cores) {
  available_cores = 0.0;
  const pid_t pid = spawn_logged(std::move(words));
  if (pid < 0) return 127;
  std::string folder;
  double t0 = -1.0, busy0 = 0.0, ours0 = 0.0, t1 = -1.0, busy1 = 0.0, ours1 = 0.0;
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    ::usleep(250000);
    if (folder.empty()) {
      try {
        folder = nlohmann::json::parse(read_text(run / "manifest.json")).value("cgroup_folder", "");
      } catch (const std::exception&) {
        continue;  // not written yet
      }
    }
    const double ours = folder.empty() ? -1.0 : cgroup_usage_s(folder);
    const double busy = host_busy_s();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ours <= 0.0 || busy < 0.0) continue;
    if (t0 < 0.0) {
      t0 = t, busy0 = busy, ours0 = ours;  // the workers have started
    } else {
      t1 = t, busy1 = busy, ours1 = ours;
    }
  }
  if (t1 > t0 + 1.0) {
    const double others = std::max(0.0, ((busy1 - busy0) - (ours1 - ours0)) / (t1 - t0));
    available_cores = std::max(0.05, static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)) - others);
    std::fprintf(stderr, "omnilearn validate: other load on the host during the testbed run: %.2f cores; %.2f left\n",
                 others, available_cores);
  }
  return exit_code(status);
}

std::string self_executable() {
  const fs::path p = current_executable();
  return p.empty() ? std::string("omnilearn") : p.string();
}

}  // namespace

int run_validate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  (void)argv;
  po::options_description opts(
      "omnilearn validate SCENARIO [options]\n\n"
      "Validates the simulator against the real testbed on SCENARIO (a BSP testbed scenario). Runs, in order:\n"
      "  1. omnilearn calibrate --out OUT/calibration   (compute law and CPU-quota slowdown on this host, at the\n"
      "     scenario's emulator.sample_cost_s)\n"
      "  2. omnilearn emulate SCENARIO --out OUT/testbed (real training under cgroup CPU quotas), and the exchange\n"
      "     probe: the same with --set policy.name=uniform --set max_iterations=80 --out OUT/probe, whose mean\n"
      "     all-reduce time of the last worker to arrive, less the quota wait the simulator models, is the\n"
      "     all-reduce's fixed cost, and whose compute-time variation is the simulator's jitter (--jitter)\n"
      "  3. omnilearn sim SCENARIO --out OUT/sim with OUT/sim-profile.yaml: the calibrated profile plus the\n"
      "     testbed's terms (host_core_flops = scenario speed of one host core, from the run's cpu_shares; the\n"
      "     share -> slowdown table from fidelity.csv's achieved shares; the quota period) and the testbed's\n"
      "     number of steps; and the host cores that other load left free during the testbed run (from\n"
      "     /proc/stat minus the run's cgroup), shared by the workers by water-filling\n"
      "  4. python3 -m omnilearn_analysis validate OUT/testbed OUT/sim [--repeat OUT/testbed-2 ...] --out OUT\n"
      "and prints, per worker, the mean and max (over 20-step windows) iteration-time error, the batch trajectory\n"
      "difference and the time-to-epoch error; with --repeats N, the testbed runs N times and the same errors of\n"
      "runs 2..N against run 1 (the testbed's own repeatability) sit beside them. OUT/validation.csv holds the\n"
      "table. The emulate and sim stages run with --force: validate owns OUT/testbed*, OUT/probe and OUT/sim and\n"
      "replaces an earlier validation's runs there (two validations into one OUT are refused by their locks).\n"
      "Needs root (cgroups) and Fashion-MNIST, like `omnilearn emulate`. Exit codes: 0 done, 1 a stage failed,\n"
      "2 usage.\n\n"
      "examples:\n"
      "  omnilearn validate scenarios/testbed/bsp-hl8.yaml --out runs/validate-hl8\n"
      "  omnilearn validate scenarios/testbed/bsp-hl2.yaml --skip-calibrate runs/validate-hl8/calibration\n"
      "  omnilearn validate scenarios/testbed/bsp-hl4.yaml --set policy.name=uniform --time-budget 60\n"
      "  omnilearn validate scenarios/testbed/bsp-hl1.yaml --testbed runs/tb-hl1 --skip-calibrate runs/cal\n"
      "  omnilearn validate scenarios/testbed/bsp-hl8.yaml --repeats 3 --out runs/validate-hl8\n\n"
      "options");
  opts.add_options()("help,h", "print this help")("scenario", po::value<std::string>(), "scenario YAML file")(
      "out", po::value<std::string>(), "output folder (default: runs/validate-<scenario name>)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field in both back ends: --set path.to.key=value (repeatable)")(
      "skip-calibrate", po::value<std::string>(),
      "use this calibration (a folder with profile.yaml and fidelity.csv, or a profile.yaml) instead of calibrating")(
      "testbed", po::value<std::string>(), "use this existing testbed run folder of SCENARIO instead of running one")(
      "repeats", po::value<int>()->default_value(1),
      "testbed runs of SCENARIO: the first is compared with the simulator, the others (OUT/testbed-2, ...) with the "
      "first, as a reference for the simulator's error (the repeat_* columns)")(
      "testbed-repeat", po::value<std::vector<std::string>>()->composing(),
      "use this existing testbed run folder as one more repeat (repeatable)")(
      "time-budget", po::value<double>(), "stop the testbed after this many seconds of training")(
      "allreduce-fixed", po::value<double>(),
      "fixed cost of each all-reduce in seconds (the simulator's allreduce_fixed_s; default: measured by the exchange "
      "probe)")(
      "jitter", po::value<std::string>()->default_value("share"),
      "the probe's compute-time variation given to the simulator, with the part of it the workers share "
      "(compute_jitter_shared): share = its standard deviation in seconds per CPU share (compute_noise); cv = one "
      "coefficient of variation for every worker (compute_jitter_cv); none = no jitter (a step then waits for the "
      "slowest worker's mean, not for the slowest of its noisy workers)")(
      "probe", po::value<std::string>(),
      "use this existing probe run folder (a short uniform run of SCENARIO) instead of running the exchange probe")(
      "share-batch", po::value<long long>()->default_value(32), "the batch of the calibration's quota sweep")(
      "host-cpu-available", po::value<double>(),
      "host cores left to the workers by other load (default: measured during the testbed run; with --testbed: none)")(
      "continuous-slowdown",
      "slow throttled workers down by the calibration loop's measured throughput (super-linear) instead of by its "
      "achieved CPU share")(
      "window", po::value<int>()->default_value(20), "steps per window of the max error")(
      "python", po::value<std::string>(),
      "the python that runs the comparison (default: OMNILEARN_PYTHON, else /usr/bin/python3)");
  po::variables_map vm;
  if (auto done = parse_command_line("validate", args, opts, "scenario", /*required=*/true, vm)) return *done;
  const std::string scenario_path = vm["scenario"].as<std::string>();
  const std::string jitter = vm["jitter"].as<std::string>();
  if (jitter != "share" && jitter != "cv" && jitter != "none") {
    std::cerr << "omnilearn validate: --jitter: expected share, cv or none, got " << jitter << "\n";
    return 2;
  }
  const int runs = vm["repeats"].as<int>();
  if (runs < 1) {
    std::cerr << "omnilearn validate: --repeats: expected at least 1 (testbed runs), got " << runs << "\n";
    return 2;
  }
  const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  auto scenario = scenarios::load_scenario(scenario_path, sets);
  if (!scenario) {
    std::cerr << "omnilearn validate: " << scenario.status().message() << "\n";
    return 1;
  }
  if (scenario->mode != controller::TrainingMode::kBsp) {
    std::cerr << "omnilearn validate: " << scenario_path << ": mode: validation covers BSP scenarios\n";
    return 2;
  }
  const fs::path out = fs::absolute(vm.count("out") ? vm["out"].as<std::string>() : "runs/validate-" + scenario->name);
  std::error_code ec;
  fs::create_directories(out, ec);
  const std::string self = self_executable();
  std::vector<std::string> set_words;
  for (const std::string& s : sets) set_words.insert(set_words.end(), {"--set", s});

  fs::path calibration = out / "calibration";
  if (vm.count("skip-calibrate")) {
    calibration = fs::absolute(vm["skip-calibrate"].as<std::string>());
  } else {
    char period[32];
    std::snprintf(period, sizeof period, "%g", scenario->emulator.cpu_period_s);
    const std::string batch = std::to_string(vm["share-batch"].as<long long>());
    // The calibration measures the compute the workers run: the scenario's emulated cost per sample, if it has one.
    const std::string sample_cost = format_g(scenario->emulator.sample_cost_s);
    if (int rc = spawn_and_wait({self, "calibrate", "--out", calibration.string(), "--period", period, "--share-batch",
                                 batch, "--sample-cost", sample_cost});
        rc != 0) {
      std::cerr << "omnilearn validate: calibration failed (exit " << rc << ")\n";
      return 1;
    }
  }

  // The testbed run the simulator is compared with, then its repeats (the same scenario and seed again: how far
  // the testbed lands from itself). Other load is measured during the first run, the one the simulator models.
  fs::path testbed = out / "testbed";
  std::vector<fs::path> repeats;
  if (vm.count("testbed-repeat")) {
    for (const std::string& r : vm["testbed-repeat"].as<std::vector<std::string>>()) repeats.push_back(fs::absolute(r));
  }
  double available_cores = vm.count("host-cpu-available") ? vm["host-cpu-available"].as<double>() : 0.0;
  for (int run = vm.count("testbed") ? 2 : 1; run <= runs; ++run) {
    const fs::path folder = run == 1 ? testbed : out / ("testbed-" + std::to_string(run));
    std::vector<std::string> words{self, "emulate", scenario_path, "--out", folder.string(), "--force"};
    words.insert(words.end(), set_words.begin(), set_words.end());
    if (vm.count("time-budget")) words.insert(words.end(), {"--time-budget", std::to_string(vm["time-budget"].as<double>())});
    double measured = 0.0;
    const int rc = run_testbed_measuring_load(words, folder, measured);
    if (run == 1 && !vm.count("host-cpu-available")) available_cores = measured;
    if (rc != 0) {
      std::cerr << "omnilearn validate: testbed run " << run << " failed (exit " << rc << ")\n";
      return 1;
    }
    if (run > 1) repeats.push_back(folder);
  }
  if (vm.count("testbed")) testbed = fs::absolute(vm["testbed"].as<std::string>());
  // A run folder's facts, or the error printed.
  auto read_facts = [](const fs::path& run) -> std::optional<TestbedFacts> {
    auto f = read_testbed(run);
    if (!f) {
      std::cerr << "omnilearn validate: " << f.status().message() << "\n";
      return std::nullopt;
    }
    return std::move(f).value();
  };
  const std::optional<TestbedFacts> facts = read_facts(testbed);
  if (!facts) return 1;

  // The exchange probe, a separate short uniform run of the scenario: the all-reduce's fixed cost (its mean
  // exchange less the quota wait the simulator adds itself; --allreduce-fixed overrides) and the compute jitter.
  fs::path probe = out / "probe";
  if (vm.count("probe")) {
    probe = fs::absolute(vm["probe"].as<std::string>());
  } else {
    std::vector<std::string> words{self, "emulate", scenario_path, "--out", probe.string(), "--force"};
    words.insert(words.end(), set_words.begin(), set_words.end());
    words.insert(words.end(), {"--set", "policy.name=uniform", "--set", "max_iterations=" + std::to_string(kProbeSteps),
                               "--target-accuracy", "0"});
    if (int rc = spawn_and_wait(words); rc != 0) {
      std::cerr << "omnilearn validate: the exchange probe failed (exit " << rc << ")\n";
      return 1;
    }
  }
  const std::optional<TestbedFacts> probed = read_facts(probe);
  if (!probed) return 1;
  const double wait_s = sim::quota_ring_wait_s(
      probed->cpu_shares, probed->quota_period_s,
      sim::quota_waits_per_allreduce(probed->cpu_shares.size(), probed->quota_holds_comm));
  std::fprintf(stderr,
               "omnilearn validate: exchange probe (%s): %.2f ms per all-reduce, %.2f ms of it quota wait; compute "
               "jitter CV %.3f, %.0f%% of its variance shared by the workers\n",
               probe.string().c_str(), probed->exchange_s * 1e3, wait_s * 1e3, probed->compute_cv, 100.0 * probed->compute_shared);
  const double allreduce_fixed_s =
      vm.count("allreduce-fixed") ? vm["allreduce-fixed"].as<double>() : std::max(0.0, probed->exchange_s - wait_s);
  std::fprintf(stderr, "omnilearn validate: all-reduce fixed cost %.2f ms\n", allreduce_fixed_s * 1e3);
  const fs::path profile = out / "sim-profile.yaml";
  SimProfileTerms terms;
  terms.allreduce_fixed_s = allreduce_fixed_s;
  if (jitter == "share") set_compute_noise(*probed, terms);
  if (jitter == "cv") terms.compute_jitter_cv = probed->compute_cv;
  terms.compute_jitter_shared = probed->compute_shared;
  terms.share_batch = static_cast<double>(vm["share-batch"].as<long long>());
  terms.continuous_slowdown = vm.count("continuous-slowdown") > 0;
  terms.available_cores = available_cores;
  if (Status st = write_sim_profile(calibration, *facts, terms, profile); !st.is_ok()) {
    std::cerr << "omnilearn validate: " << st.message() << "\n";
    return 1;
  }
  std::vector<std::string> sim{self, "sim", scenario_path, "--quiet", "--out", (out / "sim").string(), "--force"};
  sim.insert(sim.end(), set_words.begin(), set_words.end());
  sim.insert(sim.end(), {"--set", "workload.model=" + profile.string(), "--set",
                         "max_iterations=" + std::to_string(facts->iterations)});
  if (int rc = spawn_and_wait(sim); rc != 0) {
    std::cerr << "omnilearn validate: the simulation failed (exit " << rc << ")\n";
    return 1;
  }

  const std::map<std::string, std::string> env = process_environment();
  const std::string python = python_interpreter(vm.count("python") ? vm["python"].as<std::string>() : "", env);
  const std::optional<std::string> analysis = analysis_dir(current_install_layout(), env);
  std::vector<std::string> compare{python, "-m", "omnilearn_analysis", "validate", testbed.string(),
                                   (out / "sim").string(), "--out", out.string(), "--level", scenario->name,
                                   "--window", std::to_string(vm["window"].as<int>())};
  for (const fs::path& r : repeats) compare.insert(compare.end(), {"--repeat", r.string()});
  const int rc = spawn_and_wait(compare, analysis ? std::vector<std::string>{"PYTHONPATH=" + *analysis}
                                                  : std::vector<std::string>{});
  if (rc != 0) {
    std::cerr << "omnilearn validate: the comparison failed (exit " << rc << ")\n";
    return 1;
  }
  return 0;
}

}  // namespace omnilearn::cli
