// `omnilearn validate`: the simulator against the real testbed on one scenario. Calibrates the model on this host,
// runs the testbed and the simulator on the same scenario, and compares them (analysis/omnilearn_analysis/validate.py).
// Each stage is this same binary (or python3) started as a Subprocess; no shell is involved.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/pipeline_testbed_command.h"
#include "cli/stage_process.h"
#include "omnilearn/base/format.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/energy_counter.h"
#include "omnilearn/emulator/energy_verdict.h"
#include "omnilearn/emulator/host_power.h"
#include "omnilearn/emulator/validation.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/sim/quota_wait.h"

namespace omnilearn::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr int kProbeSteps = 80;  // the exchange probe: a short uniform run of the scenario

// A stage (stage_process.h), waited for; returns its exit code (127: could not start).
int spawn_and_wait(const std::vector<std::string>& words, const std::vector<std::string>& extra_env = {}) {
  auto child = spawn_stage("omnilearn validate", words, {extra_env, ""});
  if (!child) return 127;
  child->wait();
  return stage_exit_code(child->status());
}

// Runs the testbed (`words`) and, while its workers train, measures the host CPU that other processes use; returns
// the exit code and sets `available_cores` to the host's cores minus that load (0 when it could not be measured).
int run_testbed_measuring_load(const std::vector<std::string>& words, const fs::path& run, double& available_cores) {
  available_cores = 0.0;
  auto child = spawn_stage("omnilearn validate", words);
  if (!child) return 127;
  emulator::HostLoadMeter meter(run);
  while (!child->poll_exit()) {
    ::usleep(250000);
    meter.sample();
  }
  if (const auto load = meter.load()) {
    available_cores = load->available_cores;
    std::fprintf(stderr, "omnilearn validate: other load on the host during the testbed run: %.2f cores; %.2f left\n",
                 load->others_cores, available_cores);
  }
  return stage_exit_code(child->status());
}

std::string self_executable() {
  const fs::path p = current_executable();
  return p.empty() ? std::string("omnilearn") : p.string();
}

enum class Jitter { kShare, kCv, kNone };

// What `omnilearn validate` was asked for: its command line, checked, and the scenario.
struct ValidateRequest {
  std::string scenario_path;
  scenarios::Scenario scenario;
  fs::path out;
  std::vector<std::string> set_words;  // `--set K=V` for every stage that takes the scenario
  std::optional<fs::path> calibration;  // --skip-calibrate
  std::optional<fs::path> testbed;      // --testbed
  int runs = 1;                         // --repeats
  std::vector<fs::path> repeats;        // --testbed-repeat
  std::optional<double> time_budget_s;
  std::optional<double> allreduce_fixed_s;
  Jitter jitter = Jitter::kShare;
  std::optional<fs::path> probe;
  long long share_batch = 32;
  std::optional<double> host_cpu_available;
  bool continuous_slowdown = false;
  bool train = false;  // --train: the simulator trains too (workload.numerics: real); accuracy curves compared
  int window = 20;
  std::string python;  // --python: the python of the comparison ("": OMNILEARN_PYTHON, else /usr/bin/python3)
  std::string self;  // this binary, which runs the stages
};

po::options_description validate_options() {
  po::options_description opts(
      "omnilearn validate SCENARIO [options]\n"
      "omnilearn validate RUN   (a pipeline testbed run folder: its steps against their prediction; exit 1 when a\n"
      "                          bar of docs/testbed.md is missed; validation.json rewritten)\n\n"
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
      "difference and the time-to-epoch error, and the two runs' energy (the testbed's measured by the host's RAPL\n"
      "counters, else modelled from its workers' CPU time; power figures from the scenario's energy section, its\n"
      "preset or --set energy.cpu.idle=W --set energy.cpu.busy=W). An energy verdict (the 15% criterion,\n"
      "OUT/energy-verdict.json) is given like with like only: the testbed's joules measured by RAPL, against the\n"
      "simulator's run in this host's units from its idle and busy package watts, measured after the calibration\n"
      "(10 s idle, 10 s with every core busy; OUT/calibration/host-power.json) on this same host, for a run that\n"
      "is not scaled (each node's cores = its host CPU share); otherwise it says why it refuses. With --repeats N,\n"
      "the testbed runs N times and the same errors of\n"
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
      "train",
      "virtual-time training: the simulator also trains the testbed's network (workload.numerics: real), and "
      "validation.csv compares the accuracy curves, the steps and the time to the target too")(
      "window", po::value<int>()->default_value(20), "steps per window of the max error")(
      "python", po::value<std::string>(),
      "the python that runs the comparison (default: OMNILEARN_PYTHON, else /usr/bin/python3)");
  return opts;
}

// The optional option `name` of `vm`.
template <typename T>
std::optional<T> optional_value(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? std::optional<T>(vm[name].as<T>()) : std::nullopt;
}

// The repeatable option `name` of `vm` (empty when absent).
std::vector<std::string> strings(const po::variables_map& vm, const char* name) {
  return optional_value<std::vector<std::string>>(vm, name).value_or(std::vector<std::string>{});
}

// Fills `r` from the options (the scenario not yet loaded); false with the usage error printed.
bool read_options(const po::variables_map& vm, ValidateRequest& r) {
  r.scenario_path = vm["scenario"].as<std::string>();
  const std::string jitter = vm["jitter"].as<std::string>();
  if (jitter != "share" && jitter != "cv" && jitter != "none") {
    std::cerr << "omnilearn validate: --jitter: expected share, cv or none, got " << jitter << "\n";
    return false;
  }
  r.jitter = jitter == "share" ? Jitter::kShare : jitter == "cv" ? Jitter::kCv : Jitter::kNone;
  r.runs = vm["repeats"].as<int>();
  if (r.runs < 1) {
    std::cerr << "omnilearn validate: --repeats: expected at least 1 (testbed runs), got " << r.runs << "\n";
    return false;
  }
  auto absolute = [&](const char* name) -> std::optional<fs::path> {
    if (auto v = optional_value<std::string>(vm, name)) return fs::absolute(*v);
    return std::nullopt;
  };
  r.calibration = absolute("skip-calibrate");
  r.testbed = absolute("testbed");
  r.probe = absolute("probe");
  for (const std::string& p : strings(vm, "testbed-repeat")) {
    r.repeats.push_back(fs::absolute(p));
  }
  r.time_budget_s = optional_value<double>(vm, "time-budget");
  r.allreduce_fixed_s = optional_value<double>(vm, "allreduce-fixed");
  r.host_cpu_available = optional_value<double>(vm, "host-cpu-available");
  r.share_batch = vm["share-batch"].as<long long>();
  r.continuous_slowdown = vm.count("continuous-slowdown") > 0;
  r.train = vm.count("train") > 0;
  r.window = vm["window"].as<int>();
  r.python = optional_value<std::string>(vm, "python").value_or("");
  return true;
}

// The request, or the exit code to return at once (0 after --help, 1 for a bad scenario, 2 for a usage error).
std::variant<ValidateRequest, int> parse_request(const std::vector<std::string>& args) {
  const po::options_description opts = validate_options();
  po::variables_map vm;
  if (auto done = parse_command_line("validate", args, opts, "scenario", /*required=*/true, vm)) return *done;
  ValidateRequest r;
  if (!read_options(vm, r)) return 2;
  const std::vector<std::string> sets = strings(vm, "set");
  auto scenario = scenarios::load_scenario(r.scenario_path, sets);
  if (!scenario) {
    std::cerr << "omnilearn validate: " << scenario.status().message() << "\n";
    return 1;
  }
  if (scenario->mode != controller::TrainingMode::kBsp) {
    std::cerr << "omnilearn validate: " << r.scenario_path << ": mode: validation covers BSP scenarios\n";
    return 2;
  }
  r.scenario = std::move(scenario).value();
  r.out = fs::absolute(vm.count("out") ? vm["out"].as<std::string>() : "runs/validate-" + r.scenario.name);
  for (const std::string& s : sets) r.set_words.insert(r.set_words.end(), {"--set", s});
  r.self = self_executable();
  return r;
}

// `self <command> SCENARIO --out OUT --force --set ...` for the emulate and sim stages.
std::vector<std::string> stage_words(const ValidateRequest& r, const char* command, const fs::path& out) {
  std::vector<std::string> words{r.self, command, r.scenario_path};
  if (std::string(command) == "sim") words.push_back("--quiet");
  words.insert(words.end(), {"--out", out.string(), "--force"});
  words.insert(words.end(), r.set_words.begin(), r.set_words.end());
  return words;
}

// Stage 1: the calibration folder (--skip-calibrate's, or OUT/calibration, measured now); nothing after a failure.
std::optional<fs::path> calibrate(const ValidateRequest& r) {
  if (r.calibration) return *r.calibration;
  const fs::path calibration = r.out / "calibration";
  char period[32];
  std::snprintf(period, sizeof period, "%g", r.scenario.emulator.cpu_period_s);
  // The calibration measures the compute the workers run: the scenario's emulated cost per sample, if it has one.
  const std::string sample_cost = format_g(r.scenario.emulator.sample_cost_s);
  if (int rc = spawn_and_wait({r.self, "calibrate", "--out", calibration.string(), "--period", period, "--share-batch",
                               std::to_string(r.share_batch), "--sample-cost", sample_cost});
      rc != 0) {
    std::cerr << "omnilearn validate: calibration failed (exit " << rc << ")\n";
    return std::nullopt;
  }
  return calibration;
}

// Stage 1b, with a calibration made now: this host's idle and busy package power through its RAPL counters (a
// separate stress run: kHostPowerWindowS idle, then as long with every core busy), written beside the profile as
// host-power.json for the energy verdict. Without counters it says why and writes nothing: there is then no verdict.
constexpr double kHostPowerWindowS = 10.0;

void calibrate_host_power(const ValidateRequest& r, const fs::path& calibration) {
  if (r.calibration) return;  // --skip-calibrate: that folder's host-power.json, if it has one
  auto counter = emulator::open_host_energy_counter();
  auto host = emulator::this_host_id();
  if (!counter || !host) {
    std::cerr << "omnilearn validate: no host power calibration (so no energy verdict): "
              << (counter ? host.status() : counter.status()).message() << "\n";
    return;
  }
  emulator::HostPowerRun run;
  run.idle_s = run.busy_s = kHostPowerWindowS;
  auto power = emulator::measure_host_power(**counter, *host, run);
  Status written = power ? emulator::write_host_power(*power, calibration / emulator::kHostPowerFile) : power.status();
  if (!written.is_ok()) {
    std::cerr << "omnilearn validate: no host power calibration (so no energy verdict): " << written.message() << "\n";
    return;
  }
  std::fprintf(stderr, "omnilearn validate: host power (%s): %.2f W idle, %.2f W with %d cores busy\n",
               power->counter.c_str(), power->idle_w, power->busy_w, power->cores);
}

// The testbed runs: the one the simulator is compared with, then its repeats.
struct TestbedRuns {
  fs::path first;
  std::vector<fs::path> repeats;
  double available_cores = 0.0;  // host cores left by other load during the first run (0: not measured)
};

// Stage 2: the testbed run the simulator is compared with, then its repeats (the same scenario and seed again: how
// far the testbed lands from itself). Other load is measured during the first run, the one the simulator models.
std::optional<TestbedRuns> run_testbeds(const ValidateRequest& r) {
  TestbedRuns runs{r.testbed.value_or(r.out / "testbed"), r.repeats, r.host_cpu_available.value_or(0.0)};
  for (int run = r.testbed ? 2 : 1; run <= r.runs; ++run) {
    const fs::path folder = run == 1 ? runs.first : r.out / ("testbed-" + std::to_string(run));
    std::vector<std::string> words = stage_words(r, "emulate", folder);
    if (r.time_budget_s) words.insert(words.end(), {"--time-budget", std::to_string(*r.time_budget_s)});
    double measured = 0.0;
    const int rc = run_testbed_measuring_load(words, folder, measured);
    if (run == 1 && !r.host_cpu_available) runs.available_cores = measured;
    if (rc != 0) {
      std::cerr << "omnilearn validate: testbed run " << run << " failed (exit " << rc << ")\n";
      return std::nullopt;
    }
    if (run > 1) runs.repeats.push_back(folder);
  }
  return runs;
}

// A run folder's facts, or the error printed.
std::optional<emulator::TestbedFacts> read_facts(const fs::path& run) {
  auto f = emulator::read_testbed(run);
  if (!f) {
    std::cerr << "omnilearn validate: " << f.status().message() << "\n";
    return std::nullopt;
  }
  return std::move(f).value();
}

fs::path probe_folder(const ValidateRequest& r) { return r.probe.value_or(r.out / "probe"); }

// The exchange probe, a separate short uniform run of the scenario (--probe's, or OUT/probe, run now): its facts.
std::optional<emulator::TestbedFacts> run_probe(const ValidateRequest& r) {
  const fs::path probe = probe_folder(r);
  if (!r.probe) {
    std::vector<std::string> words = stage_words(r, "emulate", probe);
    words.insert(words.end(), {"--set", "policy.name=uniform", "--set", "max_iterations=" + std::to_string(kProbeSteps),
                               "--target-accuracy", "0"});
    if (int rc = spawn_and_wait(words); rc != 0) {
      std::cerr << "omnilearn validate: the exchange probe failed (exit " << rc << ")\n";
      return std::nullopt;
    }
  }
  return read_facts(probe);
}

// The simulator's terms from the probe: the all-reduce's fixed cost (its mean exchange less the quota wait the
// simulator adds itself; --allreduce-fixed overrides) and the compute jitter.
emulator::SimProfileTerms probe_terms(const ValidateRequest& r, const emulator::TestbedFacts& probed,
                                      double available_cores) {
  const double wait_s = sim::quota_ring_wait_s(
      probed.cpu_shares, probed.quota_period_s,
      sim::quota_waits_per_allreduce(probed.cpu_shares.size(), probed.quota_holds_comm));
  std::fprintf(stderr,
               "omnilearn validate: exchange probe (%s): %.2f ms per all-reduce, %.2f ms of it quota wait; compute "
               "jitter CV %.3f, %.0f%% of its variance shared by the workers\n",
               probe_folder(r).string().c_str(), probed.exchange_s * 1e3, wait_s * 1e3, probed.compute_cv,
               100.0 * probed.compute_shared);
  emulator::SimProfileTerms terms;
  terms.allreduce_fixed_s = r.allreduce_fixed_s.value_or(std::max(0.0, probed.exchange_s - wait_s));
  std::fprintf(stderr, "omnilearn validate: all-reduce fixed cost %.2f ms\n", terms.allreduce_fixed_s * 1e3);
  if (r.jitter == Jitter::kShare) emulator::set_compute_noise(probed, terms);
  if (r.jitter == Jitter::kCv) terms.compute_jitter_cv = probed.compute_cv;
  terms.compute_jitter_shared = probed.compute_shared;
  terms.share_batch = static_cast<double>(r.share_batch);
  terms.continuous_slowdown = r.continuous_slowdown;
  terms.available_cores = available_cores;
  return terms;
}

// Stage 3: the simulator profile (OUT/sim-profile.yaml), then the simulator on the scenario with it for the testbed
// run's number of steps; false with the error printed.
bool run_sim(const ValidateRequest& r, const fs::path& calibration, const emulator::TestbedFacts& facts,
             const emulator::SimProfileTerms& terms) {
  const fs::path profile = r.out / "sim-profile.yaml";
  auto written = emulator::write_sim_profile(calibration, facts, terms, profile);
  if (!written) {
    std::cerr << "omnilearn validate: " << written.status().message() << "\n";
    return false;
  }
  if (written->slowdown_shares.empty()) {
    std::cerr << "omnilearn validate: no fidelity.csv next to " << emulator::calibrated_profile_path(calibration).string()
              << ": the simulator assumes a linear quota\n";
  }
  std::vector<std::string> sim = stage_words(r, "sim", r.out / "sim");
  sim.insert(sim.end(), {"--set", "workload.model=" + profile.string(), "--set",
                         "max_iterations=" + std::to_string(facts.iterations)});
  if (r.train) sim.insert(sim.end(), {"--set", "workload.numerics=real"});
  // Every testbed run reports energy (from the preset's figures when the scenario has no `energy:` section): the
  // simulator then reports its own, for validation.csv's energy columns.
  if (!r.scenario.energy) sim.insert(sim.end(), {"--set", "energy.wait=auto"});
  if (int rc = spawn_and_wait(sim); rc != 0) {
    std::cerr << "omnilearn validate: the simulation failed (exit " << rc << ")\n";
    return false;
  }
  return true;
}

// The energy verdict, like with like (energy_verdict.h): OUT/energy-verdict.json and one line, or the reason it
// refuses; false when a file it needs is broken (printed).
bool judge_energy(const ValidateRequest& r, const fs::path& calibration, const TestbedRuns& runs) {
  auto host = emulator::this_host_id();
  auto verdict = host ? emulator::judge_host_energy(calibration, runs.first, r.out / "sim", *host)
                      : Result<emulator::EnergyVerdict>(host.status());
  Status written =
      verdict ? emulator::write_energy_verdict(*verdict, r.out / emulator::kEnergyVerdictFile) : verdict.status();
  if (!written.is_ok()) {
    std::cerr << "omnilearn validate: energy verdict: " << written.message() << "\n";
    return false;
  }
  std::cerr << "omnilearn validate: " << emulator::format_energy_verdict(*verdict) << "\n";
  return true;
}

// Stage 4: python3 -m omnilearn_analysis validate, which writes OUT/validation.csv and prints the table.
bool compare(const ValidateRequest& r, const TestbedRuns& runs) {
  const std::map<std::string, std::string> env = process_environment();
  const std::string python = python_interpreter(r.python, env);
  const std::optional<std::string> analysis = analysis_dir(current_install_layout(), env);
  std::vector<std::string> compare{python, "-m", "omnilearn_analysis", "validate", runs.first.string(),
                                   (r.out / "sim").string(), "--out", r.out.string(), "--level", r.scenario.name,
                                   "--window", std::to_string(r.window)};
  for (const fs::path& repeat : runs.repeats) compare.insert(compare.end(), {"--repeat", repeat.string()});
  compare.insert(compare.end(), {"--energy-verdict", (r.out / emulator::kEnergyVerdictFile).string()});
  const int rc = spawn_and_wait(compare, analysis ? std::vector<std::string>{"PYTHONPATH=" + *analysis}
                                                  : std::vector<std::string>{});
  if (rc != 0) {
    std::cerr << "omnilearn validate: the comparison failed (exit " << rc << ")\n";
    return false;
  }
  return true;
}

}  // namespace

int run_validate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  (void)argv;
  if (args.size() == 1 && is_pipeline_run_folder(args[0])) return run_pipeline_run_validation(args[0]);
  auto parsed = parse_request(args);
  if (const int* done = std::get_if<int>(&parsed)) return *done;
  const ValidateRequest& r = std::get<ValidateRequest>(parsed);
  std::error_code ec;
  fs::create_directories(r.out, ec);
  const std::optional<fs::path> calibration = calibrate(r);
  if (!calibration) return 1;
  calibrate_host_power(r, *calibration);
  const std::optional<TestbedRuns> runs = run_testbeds(r);
  if (!runs) return 1;
  const std::optional<emulator::TestbedFacts> facts = read_facts(runs->first);
  if (!facts) return 1;
  const std::optional<emulator::TestbedFacts> probed = run_probe(r);
  if (!probed) return 1;
  const emulator::SimProfileTerms terms = probe_terms(r, *probed, runs->available_cores);
  if (!run_sim(r, *calibration, *facts, terms)) return 1;
  if (!judge_energy(r, *calibration, *runs)) return 1;
  return compare(r, *runs) ? 0 : 1;
}

}  // namespace omnilearn::cli
