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
#include "omnilearn/run/run_folder.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
namespace oe = omnilearn::emulator;

int fail(const Status& status) {
  std::cerr << "omnilearn jobs emulate: " << status.message() << "\n";
  return 1;
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
  auto setup = load_testbed_jobs(file, vm, settings);
  if (!setup) return fail(setup.status());
  const scenarios::JobsScenario& s = setup->scenario;
  if (out.empty()) out = (std::filesystem::path(s.outputs_dir) / (s.name + "-testbed")).string();

  std::vector<oe::TestbedJob> jobs;
  std::vector<oe::SegmentJob> segment_jobs;
  for (const traces::JobSpec& j : setup->jobs) {
    oe::TestbedJob t;
    t.name = j.name;
    t.arrival_s = j.arrival_s;
    t.workers = static_cast<int>(j.workers);
    t.min_workers = static_cast<int>(j.min_workers);
    t.max_workers = static_cast<int>(j.max_workers);
    if (!(j.epochs > 0.0)) {
      return fail(Status::invalid_argument("job '" + j.name +
                                           "': a target alone (no epochs); the testbed's jobs train "
                                           "for a number of epochs: give epochs"));
    }
    t.total_samples = j.epochs * static_cast<double>(j.dataset_samples);
    t.balances_batches = j.batch_policy != "uniform";
    const std::int64_t per_worker = std::max<std::int64_t>(1, j.global_batch / j.workers);
    for (const auto& [kind, cores] : setup->kind_cores) {
      auto est = setup->speeds->speed(j.model, kind, per_worker);
      if (!est) return fail(est.status().with_context("job '" + j.name + "'"));
      t.throughput[kind] = est->samples_per_s;
    }
    jobs.push_back(std::move(t));
    segment_jobs.push_back({j.name, j.model, j.global_batch, j.batch_policy, s.seed});
  }
  scheduler::ClusterFacts facts;
  for (const scenarios::DeviceGroup& g : setup->cluster.groups) {
    for (std::int64_t n = 0; n < g.nodes; ++n) {
      facts.hosts.push_back(
          {g.device + "-" + std::to_string(facts.hosts.size()), g.device, static_cast<int>(g.gpus_per_node)});
    }
  }
  oe::JobsTestbedOptions o;
  o.scheduler = s.scheduler;
  o.scheduling.round_s = s.round_s;
  o.scheduling.placement = s.placement == "spread" ? scheduler::Placement::kSpread : scheduler::Placement::kPack;
  if (!s.las_thresholds.empty()) o.scheduling.las_thresholds = s.las_thresholds;
  o.max_time_s = s.max_time_s;
  if (const Status st = oe::check_jobs_testbed(jobs, o); !st.is_ok()) return fail(st);

  run::RunFolderOptions folder_options;
  folder_options.reuse = force ? run::FolderReuse::kReplace : run::FolderReuse::kRefuse;
  folder_options.own_files = {"jobs.csv", "allocations.csv", "summary.json", "manifest.json", "segments"};
  auto folder = run::RunFolder::claim(out, folder_options);
  if (!folder) return fail(folder.status());
  const std::string segments = out + "/segments";
  std::filesystem::create_directories(segments);
  nlohmann::ordered_json manifest;
  manifest["scenario"] = scenarios::jobs_scenario_json(s);
  manifest["testbed"] = {{"kind_cores", setup->kind_cores},
                         {"cluster_cores", setup->cluster_cores},
                         {"sample_cost_s", settings.sample_cost_s}};
  manifest["argv"] = args;
  manifest["omnilearn_version"] = version_string();
  if (const Status st = run::write_file_atomically(out + "/manifest.json", manifest.dump(2) + "\n"); !st.is_ok()) {
    return fail(st);
  }

  StopSignals signals;
  oe::ProcessSegmentOptions segment_options;
  segment_options.omnilearn = current_executable().string();
  segment_options.dir = segments;
  segment_options.kind_cores = setup->kind_cores;
  segment_options.sample_cost_s = settings.sample_cost_s;
  segment_options.replace = force;
  segment_options.stop_requested = [] { return StopSignals::received() != 0; };
  if (!quiet)
    segment_options.log = [](const std::string& line) { std::cerr << "omnilearn jobs emulate: " << line << "\n"; };
  o.stop_requested = segment_options.stop_requested;
  if (!quiet) {
    o.on_round = [](Seconds now_s, std::size_t done, std::size_t total) {
      std::cerr << "omnilearn jobs emulate: round at t=" << now_s << " s: " << done << "/" << total << " jobs done\n";
    };
  }
  Result<oe::JobsTestbedSummary> summary = Status::internal("not run");
  {
    oe::ProcessSegmentRunner runner(segment_jobs, segment_options);
    summary = oe::run_jobs_testbed(jobs, facts, o, runner);
  }  // every segment stopped, its cgroups removed
  if (!summary) {
    const int sig = StopSignals::received();
    std::cerr << "omnilearn jobs emulate: " << summary.status().message()
              << "; every segment's workers were stopped and their cgroups removed\n";
    return sig != 0 ? 128 + sig : 1;
  }
  nlohmann::ordered_json js;
  js["kind"] = "jobs-testbed";
  js["scheduler"] = s.scheduler;
  js["round_s"] = s.round_s;
  js["jobs"] = summary->jobs.size();
  js["finished"] = summary->finished;
  js["makespan_s"] = summary->makespan_s;
  js["rounds"] = summary->rounds;
  if (!summary->stopped.empty()) js["stopped"] = summary->stopped;
  for (const auto& [file_name, text] : {std::pair<std::string, std::string>{"jobs.csv", oe::testbed_jobs_csv(*summary)},
                                        {"allocations.csv", summary->allocations_csv},
                                        {"summary.json", js.dump(2) + "\n"}}) {
    if (const Status st = run::write_file_atomically(out + "/" + file_name, text); !st.is_ok()) return fail(st);
  }
  std::printf("%s on the testbed (%s, %.3g host cores): %zu/%zu jobs done, makespan %.4g s (emulated)\n",
              s.scheduler.c_str(), setup->cluster.name.c_str(), setup->cluster_cores, summary->finished,
              summary->jobs.size(), summary->makespan_s);
  for (const oe::TestbedJobOutcome& j : summary->jobs) {
    std::printf("  %-12s JCT %8.3f s  mean step %.4f s  restarts %lld\n", j.name.c_str(),
                j.finished() ? j.jct_s() : -1.0, j.mean_step_s(), static_cast<long long>(j.restarts));
  }
  std::printf("  run folder: %s\n", out.c_str());
  return 0;
}

}  // namespace omnilearn::cli
