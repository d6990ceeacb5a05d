// `omnilearn jobs validate`: the simulator against the testbed on one jobs scenario. Calibrates the testbed's device
// kinds on this host (each kind's samples/s at two batches, from short one-worker testbed runs, and the all-reduce's
// fixed cost from a two-worker run, to which the simulated links' latency is fitted), then runs the scenario on the
// testbed (`omnilearn jobs emulate`) and in the simulator (`omnilearn jobs run`) with those speeds, and compares
// each job's JCT and mean step time, and the allocations. Each stage is this binary started as a Subprocess.
#include <sys/wait.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/jobs_command.h"
#include "cli/jobs_testbed_setup.h"
#include "cli/stage_process.h"
#include "cli/subcommand_line.h"
#include "omnilearn/base/format.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/jobs_comparison.h"
#include "omnilearn/emulator/segment_processes.h"
#include "omnilearn/emulator/validation.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/traces/csv_table.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::cli {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
namespace oe = omnilearn::emulator;

int fail(const Status& status) { return omnilearn::cli::fail_with("omnilearn jobs validate", status); }

// Runs `words` (this binary's subcommand) as a stage (stage_process.h), logged to `log_file` when given; an error
// naming the stage unless it exits 0.
Status run_stage(std::vector<std::string> words, const std::string& log_file = "") {
  words.insert(words.begin(), current_executable().string());
  auto child = spawn_stage("omnilearn jobs validate", words, {{}, log_file});
  if (!child) return child.status();
  child->wait();
  if (WIFEXITED(child->status()) && WEXITSTATUS(child->status()) == 0) return Status::ok();
  return Status::internal("omnilearn " + words[1] + " " + words[2] + " " + describe_exit(child->status()) +
                          (log_file.empty() ? "" : "; see " + log_file));
}

// samples/s of a one-worker testbed run: its steps after the first 10 (start-up), end to start.
Result<double> measured_speed(const fs::path& run) {
  auto table = traces::CsvTable::open((run / "iterations.csv").string(), traces::RaggedRows::kSkip);
  if (!table) return table.status();
  auto c = table->columns({"step", "start_s", "compute_s", "comm_s", "wait_s", "batch"});
  if (!c) return c.status();
  double samples = 0.0, first = -1.0, last = 0.0;
  std::vector<double> v(c->size());
  while (table->next()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto x = table->number((*c)[i]);
      if (!x) return x.status();
      v[i] = *x;
    }
    if (v[0] < 10) continue;
    if (first < 0.0) first = v[1];
    last = v[1] + v[2] + v[3] + v[4];
    samples += v[5];
  }
  OMNI_RETURN_IF_ERROR(table->status());
  if (!(last > first && first >= 0.0)) return Status::parse_error(table->path() + ": too few steps");
  return samples / (last - first);
}

struct Calibration {
  std::string kinds, speeds, cluster;  // files
};

std::string cluster_yaml(const scenarios::DeviceCluster& c, double latency_s, const std::string& note) {
  std::string y =
      traces::comment_lines(note) + "name: " + c.name + "-testbed\nsource: omnilearn jobs validate\ngroups:\n";
  for (const scenarios::DeviceGroup& g : c.groups) {
    y += "  - {device: " + g.device + ", nodes: " + std::to_string(g.nodes) +
         ", gpus_per_node: " + std::to_string(g.gpus_per_node) +
         ", bandwidth: 10GBps, latency: " + traces::shortest_number(latency_s * 1e6) + "us}\n";
  }
  return y;
}

// One calibration run: `batch` samples per step on `kinds` (one worker each), `steps` steps; its run folder.
struct CalibrationRuns {
  const TestbedJobsSetup& t;
  oe::ProcessSegmentOptions options;
  std::string model;
  fs::path dir;
  int steps = 0;

  Result<fs::path> run(const std::string& name, const std::vector<std::string>& kinds, std::int64_t batch) const {
    oe::SegmentJob job{name, model, batch, "uniform", t.run.scenario.seed};
    auto yaml = oe::segment_scenario_yaml(job, kinds, batch * steps, options, name);
    if (!yaml) return yaml.status();
    const fs::path scen = dir / (name + ".yaml");
    OMNI_RETURN_IF_ERROR(traces::write_text_atomically(scen.string(), *yaml));
    OMNI_RETURN_IF_ERROR(run_stage({"emulate", scen.string(), "--out", (dir / name).string(), "--force"},
                                   (dir / (name + ".log")).string()));
    return dir / name;
  }
};

// Each kind's speed at the smallest and largest batch the jobs give a worker, as a device speed table.
Result<std::string> measure_speeds(const CalibrationRuns& runs, std::int64_t lo, std::int64_t hi) {
  std::string speeds = std::string(traces::kDeviceSpeedsHeader) + "\n";
  std::map<std::pair<std::string, std::int64_t>, double> measured;
  for (const auto& [kind, cores] : runs.t.kind_cores) {
    for (const std::int64_t b : {lo, hi}) {
      if (measured.count({kind, b})) continue;
      auto run = runs.run(kind + "-b" + std::to_string(b), {kind}, b);
      if (!run) return run.status();
      auto v = measured_speed(*run);
      if (!v) return v.status();
      measured[{kind, b}] = *v;
      speeds += runs.model + ",fashion-mnist," + kind + "," + std::to_string(b) + "," + traces::shortest_number(*v) +
                ",testbed\n";
      std::fprintf(stderr, "omnilearn jobs validate: %s at batch %lld: %.1f samples/s\n", kind.c_str(),
                   static_cast<long long>(b), *v);
    }
  }
  return speeds;
}

// The simulator's mean step of one two-worker job at link latencies 0 and 1 ms.
Result<std::vector<double>> probe_steps(const CalibrationRuns& runs, const Calibration& c, std::int64_t pair_batch) {
  const std::string probe = (runs.dir / "probe.csv").string();
  std::string pj = std::string(traces::kJobFileHeader) + "\n";
  pj += "probe,0," + runs.model + ",fashion-mnist,60000,1,,2,2,2," + std::to_string(pair_batch) + ",bsp,uniform\n";
  OMNI_RETURN_IF_ERROR(traces::write_text_atomically(probe, pj));
  std::vector<double> step;
  for (const double l : {0.0, 1e-3}) {
    const fs::path yaml = runs.dir / ("probe-" + traces::shortest_number(l * 1e3) + "ms.yaml");
    OMNI_RETURN_IF_ERROR(traces::write_text_atomically(yaml.string(), cluster_yaml(runs.t.run.cluster, l, "probe")));
    const fs::path out = runs.dir / ("probe-" + traces::shortest_number(l * 1e3) + "ms");
    std::vector<std::string> words = {"jobs",   "run",      probe,        "--cluster",   yaml.string(), "--kinds",
                                      c.kinds,  "--speeds", c.speeds,     "--scheduler", "fifo",        "--round",
                                      "100000", "--out",    out.string(), "--force",     "--quiet"};
    for (const auto& [m, p] : runs.t.run.scenario.parameters) {
      words.insert(words.end(), {"--parameters", m + "=" + traces::shortest_number(p)});
    }
    OMNI_RETURN_IF_ERROR(run_stage(words, out.string() + ".log"));
    auto times = oe::read_run_job_times(out.string());
    if (!times) return times.status();
    step.push_back(times->front().mean_step_s);
  }
  return step;
}

// The link latency at which the simulator's two-worker exchange equals the testbed's, on the kind with the most
// devices.
Result<double> fit_latency(const CalibrationRuns& runs, const Calibration& c, std::int64_t pair_batch) {
  std::string kind;
  std::int64_t most = 0;
  for (const scenarios::DeviceGroup& g : runs.t.run.cluster.groups) {
    if (g.nodes * g.gpus_per_node > most) most = g.nodes * g.gpus_per_node, kind = g.device;
  }
  auto run = runs.run("exchange", {kind, kind}, pair_batch);
  if (!run) return run.status();
  auto facts = oe::read_testbed(*run);
  if (!facts) return facts.status();
  auto table = traces::read_device_speed_table(c.kinds, c.speeds);
  if (!table) return table.status();
  auto est = table->speed(runs.model, kind, pair_batch / 2);
  if (!est) return est.status();
  const double compute_s = static_cast<double>(pair_batch / 2) / est->samples_per_s;
  // The simulated step is a line in the latency: solved for the testbed's exchange.
  auto step = probe_steps(runs, c, pair_batch);
  if (!step) return step.status();
  const double per_s = ((*step)[1] - (*step)[0]) / 1e-3;
  const double fixed = (*step)[0] - compute_s;
  const double latency_s = per_s > 0.0 ? std::max(0.0, (facts->exchange_s - fixed) / per_s) : 0.0;
  std::fprintf(stderr,
               "omnilearn jobs validate: testbed exchange %.3f ms; simulated %.3f ms + %.3f x latency: latency %.1f "
               "us\n",
               1e3 * facts->exchange_s, 1e3 * fixed, per_s, 1e6 * latency_s);
  return latency_s;
}

// Measures the kinds' speeds and the exchange, fits the links' latency; writes DIR/{kinds.csv,speeds.csv,cluster.yaml}.
Result<Calibration> calibrate(const TestbedJobsSetup& t, const TestbedSettings& settings, const fs::path& dir,
                              int steps) {
  fs::create_directories(dir);
  Calibration c{(dir / "kinds.csv").string(), (dir / "speeds.csv").string(), (dir / "cluster.yaml").string()};
  auto kinds_text = traces::read_text_file(t.run.scenario.device_kinds);
  if (!kinds_text) return kinds_text.status();
  OMNI_RETURN_IF_ERROR(run::write_file_atomically(c.kinds, *kinds_text));
  std::set<std::string> models;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 1, pair_batch = 0;
  for (const traces::JobSpec& j : t.run.jobs) {
    models.insert(j.model);
    lo = std::min(lo, std::max<std::int64_t>(1, j.global_batch / j.max_workers / 2));
    hi = std::max(hi, j.global_batch);
    if (j.workers >= 2) pair_batch = std::max(pair_batch, j.global_batch / j.workers * 2);
  }
  CalibrationRuns runs{t, {}, *models.begin(), dir, steps};
  runs.options.kind_cores = t.kind_cores;
  runs.options.sample_cost_s = settings.sample_cost_s;
  auto speeds = measure_speeds(runs, lo, hi);
  if (!speeds) return speeds.status();
  OMNI_RETURN_IF_ERROR(traces::write_text_atomically(c.speeds, *speeds));
  double latency_s = 0.0;
  if (pair_batch > 0) {
    auto fitted = fit_latency(runs, c, pair_batch);
    if (!fitted) return fitted.status();
    latency_s = *fitted;
  }
  OMNI_RETURN_IF_ERROR(traces::write_text_atomically(
      c.cluster, cluster_yaml(t.run.cluster, latency_s,
                              "The testbed cluster, its links' latency fitted to the exchange "
                              "measured on this host (omnilearn jobs validate)")));
  return c;
}

// The scenario's command-line words with the calibration's kinds, speeds and cluster in place of any given.
std::vector<std::string> calibrated_words(const po::variables_map& vm, const Calibration& c) {
  std::vector<std::string> words;
  for (const std::string& w : scenario_words(vm)) words.push_back(w);
  for (std::size_t i = 0; i + 1 < words.size();) {
    if (words[i] == "--kinds" || words[i] == "--speeds" || words[i] == "--cluster") {
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i), words.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else {
      i += 2;
    }
  }
  words.insert(words.end(), {"--kinds", c.kinds, "--speeds", c.speeds, "--cluster", c.cluster});
  return words;
}

// Runs the testbed and the simulator with `words`, compares each job, writes comparison.csv and prints the table;
// the exit code (0: every job within the tolerance).
int run_and_compare(const std::string& file, const fs::path& dir, const std::vector<std::string>& words,
                    const TestbedSettings& settings, double tolerance) {
  std::vector<std::string> testbed = {"jobs",
                                      "emulate",
                                      file,
                                      "--out",
                                      (dir / "testbed").string(),
                                      "--cores-per-tflops",
                                      format_g(settings.cores_per_tflops),
                                      "--sample-cost",
                                      format_g(settings.sample_cost_s)};
  testbed.insert(testbed.end(), words.begin(), words.end());
  if (const Status st = run_stage(testbed); !st.is_ok()) return fail(st);
  std::vector<std::string> sim = {"jobs", "run", file, "--out", (dir / "sim").string(), "--quiet"};
  sim.insert(sim.end(), words.begin(), words.end());
  if (const Status st = run_stage(sim); !st.is_ok()) return fail(st);
  auto sim_times = oe::read_run_job_times((dir / "sim").string());
  if (!sim_times) return fail(sim_times.status());
  auto tb_times = oe::read_run_job_times((dir / "testbed").string());
  if (!tb_times) return fail(tb_times.status());
  auto cmp = oe::compare_job_runs(*sim_times, *tb_times, tolerance);
  if (!cmp) return fail(cmp.status());
  if (const Status st = run::write_file_atomically((dir / "comparison.csv").string(), oe::comparison_csv(*cmp));
      !st.is_ok()) {
    return fail(st);
  }
  std::printf("%s", oe::comparison_table(*cmp).c_str());
  std::printf("  comparison: %s\n", (dir / "comparison.csv").string().c_str());
  return cmp->pass ? 0 : 1;
}

}  // namespace

int run_jobs_validate(const std::vector<std::string>& args) {
  std::string file;
  std::string out;
  std::string calibration;
  double tolerance = 0.10;
  int steps = 60;
  TestbedSettings settings;
  po::options_description desc(
      "omnilearn jobs validate JOBS: the simulator against the testbed on a jobs scenario or job file: calibrates\n"
      "the testbed's device kinds on this host, runs `jobs emulate` and `jobs run` with those speeds, and compares\n"
      "each job's JCT and mean step time (exit 0 when every job is within the tolerance, 1 otherwise)");
  desc.add_options()("help,h", "show this help")("jobs", po::value(&file)->required(), "jobs scenario or job file")(
      "out", po::value(&out)->required(), "folder: calibration/, testbed/, sim/, comparison.csv (must not hold them)")(
      "tolerance", po::value(&tolerance)->default_value(tolerance), "largest relative error that passes")(
      "calibration", po::value(&calibration),
      "reuse an earlier calibration folder (kinds.csv, speeds.csv, cluster.yaml) instead of measuring")(
      "calibration-steps", po::value(&steps)->default_value(steps), "steps of each calibration run");
  add_testbed_jobs_options(desc, settings);
  po::positional_options_description pos;
  pos.add("jobs", 1);
  const char* examples =
      "  omnilearn jobs validate scenarios/testbed/jobs/jobs.yaml --out runs/jobs-validate\n"
      "  omnilearn jobs validate scenarios/testbed/jobs/preempt.yaml --seed 2 --calibration "
      "runs/jobs-validate/calibration \\\n"
      "      --out runs/preempt-validate-2\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, examples)) return *done;
  auto setup = load_testbed_jobs(file, vm, settings);
  if (!setup) return fail(setup.status());
  const fs::path dir(out);
  for (const char* part : {"testbed", "sim", "comparison.csv"}) {
    if (fs::exists(dir / part))
      return fail(Status::invalid_argument((dir / part).string() + " exists: give a new --out"));
  }
  Calibration c;
  if (calibration.empty()) {
    auto made = calibrate(*setup, settings, dir / "calibration", steps);
    if (!made) return fail(made.status());
    c = *made;
  } else {
    const fs::path from(calibration);
    c = {(from / "kinds.csv").string(), (from / "speeds.csv").string(), (from / "cluster.yaml").string()};
  }
  // Both runs: the same scenario, with the calibrated kinds, speeds and cluster.
  return run_and_compare(file, dir, calibrated_words(vm, c), settings, tolerance);
}

}  // namespace omnilearn::cli
