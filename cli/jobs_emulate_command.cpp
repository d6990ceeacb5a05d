// `omnilearn jobs emulate`: a jobs scenario (or job file) on the testbed: the scheduler decides live, in rounds on an
// emulated clock, and each job's segments run as real testbed runs (omnilearn emulate) side by side, each worker
// held to the CPU share of the device kind it was given (docs/jobs.md, "Several jobs on the testbed").
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/jobs_command.h"
#include "cli/jobs_testbed_setup.h"
#include "cli/progress_bar.h"
#include "cli/stop_signals.h"
#include "cli/subcommand_line.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/emulator/jobs_testbed.h"
#include "omnilearn/emulator/segment_processes.h"
#include "omnilearn/emulator/jobs_testbed_setup.h"
#include "omnilearn/run/jobs_run_folder.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
namespace oe = omnilearn::emulator;

int fail(const Status& status) { return omnilearn::cli::fail_with("omnilearn jobs emulate", status); }

// Claims `out` and writes its manifest: the scenario, the testbed's CPU shares and the command line.
Result<std::unique_ptr<run::RunFolder>> start_folder(const TestbedJobsSetup& t, bool force,
                                                     const TestbedSettings& settings,
                                                     const std::vector<std::string>& args) {
  nlohmann::ordered_json extra;
  extra["testbed"] = {
      {"kind_cores", t.kind_cores}, {"cluster_cores", t.cluster_cores}, {"sample_cost_s", settings.sample_cost_s}};
  extra["argv"] = args;
  return run::start_jobs_run_folder(t.run, force, extra, version_string());
}

oe::ProcessSegmentOptions segment_runner_options(const TestbedJobsSetup& t, const TestbedSettings& settings,
                                                 const std::string& segments, bool force, bool quiet) {
  oe::ProcessSegmentOptions o;
  o.omnilearn = current_executable().string();
  o.dir = segments;
  o.kind_cores = t.kind_cores;
  o.sample_cost_s = settings.sample_cost_s;
  o.replace = force;
  o.stop_requested = [] { return StopSignals::received() != 0; };
  if (!quiet) o.log = [](const std::string& line) { std::cerr << "omnilearn jobs emulate: " << line << "\n"; };
  return o;
}

}  // namespace

int run_jobs_emulate(const std::vector<std::string>& args) {
  std::string file;
  std::string out;
  bool force = false;
  bool quiet = false;
  TestbedSettings settings;
  po::options_description desc(
      "omnilearn jobs emulate JOBS: run a jobs scenario (.yaml) or job file on this host's testbed: the scheduler\n"
      "decides every round (emulated clock); each job's workers are processes held by cgroups to their device's CPU\n"
      "share; start-ups are kept off the clock. Each option below overrides its scenario key");
  desc.add_options()("help,h", "show this help")("jobs", po::value(&file)->required(), "jobs scenario or job file")(
      "out", po::value(&out),
      "run folder: jobs.csv, allocations.csv, summary.json, manifest.json, segments/ "
      "[<outputs.dir>/<name>-testbed]")("force", po::bool_switch(&force),
                                        "replace an earlier run's files in --out (and its segments' run folders)")(
      "quiet", po::bool_switch(&quiet), "no progress lines");
  add_testbed_jobs_options(desc, settings);
  po::positional_options_description pos;
  pos.add("jobs", 1);
  const char* examples =
      "  omnilearn jobs emulate scenarios/testbed/jobs/jobs.yaml --out runs/jobs-testbed\n"
      "  omnilearn jobs emulate scenarios/testbed/jobs/preempt.yaml --seed 2 --out runs/preempt-2\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, examples)) return *done;
  auto setup = load_testbed_jobs(file, vm, settings, out);
  if (!setup) return fail(setup.status());
  const scenarios::JobsScenario& s = setup->run.scenario;
  out = setup->run.out_dir;
  auto plan = oe::testbed_jobs_plan(*setup);
  if (!plan) return fail(plan.status());
  oe::JobsTestbedOptions& o = plan->options;
  if (const Status st = oe::check_jobs_testbed(plan->jobs, o); !st.is_ok()) return fail(st);
  auto folder = start_folder(*setup, force, settings, args);
  if (!folder) return fail(folder.status());
  const std::string segments = out + "/segments";
  std::filesystem::create_directories(segments);
  StopSignals signals;
  oe::ProcessSegmentOptions segment_options = segment_runner_options(*setup, settings, segments, force, quiet);
  o.stop_requested = segment_options.stop_requested;
  if (!quiet) {
    o.on_round = [](Seconds now_s, std::size_t done, std::size_t total) {
      std::cerr << "omnilearn jobs emulate: round at t=" << now_s << " s: " << done << "/" << total << " jobs done\n";
    };
  }
  Result<oe::JobsTestbedSummary> summary = Status::internal("not run");
  {
    oe::ProcessSegmentRunner runner(plan->segment_jobs, segment_options);
    summary = oe::run_jobs_testbed(plan->jobs, plan->cluster, o, runner);
  }  // every segment stopped, its cgroups removed
  if (!summary) {
    const int sig = StopSignals::received();
    std::cerr << "omnilearn jobs emulate: " << summary.status().message()
              << "; every segment's workers were stopped and their cgroups removed\n";
    return sig != 0 ? 128 + sig : 1;
  }
  const run::JobsRunWriter writer(out);
  for (const Status& st : {writer.write_jobs(oe::testbed_jobs_table(*summary, setup->run.jobs, plan->cluster.kinds())),
                           writer.write_allocations(summary->allocations_csv),
                           writer.write_summary(oe::testbed_summary_json(*summary, s))}) {
    if (!st.is_ok()) return fail(st);
  }
  std::printf("%s on the testbed (%s, %.3g host cores): %zu/%zu jobs done, makespan %.4g s (emulated)\n",
              s.scheduler.c_str(), setup->run.cluster.name.c_str(), setup->cluster_cores, summary->finished,
              summary->jobs.size(), summary->makespan_s);
  for (const oe::TestbedJobOutcome& j : summary->jobs) {
    std::printf("  %-12s JCT %8.3f s  mean step %.4f s  restarts %lld\n", j.name.c_str(),
                j.finished() ? j.jct_s() : -1.0, j.mean_step_s(), static_cast<long long>(j.restarts));
  }
  std::printf("  run folder: %s\n", out.c_str());
  return 0;
}

}  // namespace omnilearn::cli
