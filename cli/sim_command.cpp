// `omnilearn sim`: load one scenario (with --set overrides), simulate it, write its run folder, print a summary.
#include <boost/program_options.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "cli/stop_signals.h"
#include "omnilearn/scenarios/scenario_kind.h"
#include "cli/hybrid_sim_command.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/sim/simulation.h"
#ifdef OMNILEARN_HAVE_TORCH_NUMERICS
#include "omnilearn/emulator/torch_numerics.h"
#endif
#if defined(OMNILEARN_HAVE_SIM_TRAIN) && !defined(OMNILEARN_HAVE_TORCH_NUMERICS)
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#endif

namespace omnilearn::cli {

namespace po = boost::program_options;

#if defined(OMNILEARN_HAVE_SIM_TRAIN) && !defined(OMNILEARN_HAVE_TORCH_NUMERICS)
namespace {
// Replaces this process with omnilearn-sim-train (the same command linked with LibTorch), the same argv: the one next
// to this binary (the build folder and an installed bin/ hold both), else the one on PATH. No path is compiled in.
// Returns only on failure, with the exit code.
int exec_sim_train(const std::vector<std::string>& argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string path = "omnilearn-sim-train";
  if (!ec && std::filesystem::exists(self.parent_path() / path, ec)) path = (self.parent_path() / path).string();
  std::vector<std::string> words = argv;
  std::vector<char*> ptrs;
  for (std::string& w : words) ptrs.push_back(w.data());
  ptrs.push_back(nullptr);
  ::execvp(path.c_str(), ptrs.data());
  std::cerr << "omnilearn sim: workload.numerics: real runs in " << path << ", which cannot be started: "
            << std::strerror(errno) << "\n";
  return 1;
}
}  // namespace
#endif

namespace {

// The options of `omnilearn sim`, with its help text.
po::options_description sim_options() {
  po::options_description opts(
      "omnilearn sim SCENARIO [options]\n\n"
      "Simulates SCENARIO (a YAML file) in SimGrid and writes its run folder: manifest.json, iterations.csv,\n"
      "plans.csv, availability.csv, summary.json, timeline.json. The folder must be new or empty (--force replaces\n"
      "an earlier run's files there) and is locked while the run lasts: a second run into it is refused.\n"
      "SIGINT or SIGTERM stops the run at the next step: the rows so far are kept whole, timeline.json is closed\n"
      "valid, summary.json is not written. Exit codes: 0 done, 1 failure, 2 usage, 130 SIGINT, 143 SIGTERM.\n"
      "Virtual-time training (workload.numerics: real): SimGrid times the run and the testbed's LibTorch code\n"
      "trains for real (BSP steps, ASP pushes at their simulated arrival with their staleness), adding\n"
      "evaluations.csv, loss and accuracy in iterations.csv, final_accuracy and time_to_target_s (simulated\n"
      "seconds) to the folder; emulator.* sets the network, data, optimiser, eval_every, target_accuracy and\n"
      "time_budget_s. It needs a build with LibTorch (omnilearn-sim-train, run for such a scenario).\n"
      "ASP's algorithm (workload.asp, docs/asp-rules.md): update (gradient | model-overwrite), pull (every-push |\n"
      "per-epoch), rule (asgd | staleness-aware | dc-asgd | ssp | ringmaster | rescaled | staleness-bounded) with\n"
      "staleness_bound (ssp), delay_threshold (ringmaster, staleness-bounded) and dc_lambda (dc-asgd); the\n"
      "simulator times SSP's waits and the epoch barrier. workload.partition: iid (default) or sorted-shards\n"
      "(each ASP worker holds only its shards of the label-sorted training set; real numerics).\n\n"
      "A `kind: hybrid` scenario (docs/hybrid.md) runs a pipeline/tensor/data-parallel job under each policy it\n"
      "names (control.policy or control.policies) and writes steps.csv, plans.csv, placement.csv, devices.csv,\n"
      "timeline.json and summary.json, one folder per policy and policies.csv when there are several.\n\n"
      "examples:\n"
      "  omnilearn sim scenarios/paper/bsp-hl8.yaml\n"
      "  omnilearn sim scenarios/paper/bsp-hl8.yaml --set policy.name=uniform --out runs/hl8-uniform\n"
      "  omnilearn sim scenarios/paper/bsp-dynamic.yaml --set policy.dead_band=0.1 --seed 7\n"
      "  omnilearn sim scenarios/paper/bsp-hl8.yaml --out runs/hl8-uniform --force   (again, into the same folder)\n"
      "  omnilearn sim scenarios/testbed/asp-hl8.yaml --set workload.numerics=real --set workload.model=profiles/hl8.yaml\n"
      "      --set emulator.eval_every=250 --out runs/vt-asp-hl8   (virtual-time training)\n"
      "  omnilearn sim scenarios/testbed/asp-hl8.yaml --set workload.numerics=real --set workload.model=profiles/hl8.yaml\n"
      "      --set 'workload.asp={update: model-overwrite, pull: per-epoch}'   (the OmniLearn paper's ASP)\n"
      "  omnilearn sim scenarios/hybrid/gptneo-mixed-failslow.yaml --out runs/hybrid   (a hybrid job, 4 policies)\n\n"
      "options");
  opts.add_options()("help,h", "print this help")("scenario", po::value<std::string>(), "scenario YAML file")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field: --set path.to.key=value (repeatable), e.g. --set policy.name=affine")(
      "out", po::value<std::string>(), "run folder (default: <outputs.dir>/<scenario name>)")(
      "seed", po::value<std::uint64_t>(), "seed (overrides the scenario's)")(
      "quiet,q", "no progress bar")("no-iterations", "skip per-iteration rows in iterations.csv (huge runs)")(
      "no-timeline", "skip timeline.json")(
      "cfg", po::value<std::vector<std::string>>()->composing(),
      "a SimGrid setting, --cfg=name:value (repeatable; after omnilearn's defaults, so it overrides them), e.g. "
      "--cfg=network/model:LV08 --cfg=contexts/stack-size:128")(
      "log", po::value<std::vector<std::string>>()->composing(),
      "a SimGrid log setting, --log=category.setting:value (repeatable), e.g. --log=root.thres:info")(
      "plan-rows", po::value<std::string>()->default_value("auto"),
      "plans.csv's rows per decision: full (one per worker), changes (a marker row, then the workers whose batch or "
      "weight changed), auto (full up to 64 workers, changes above)")(
      "threads", po::value<int>()->default_value(1),
      "workload.numerics: real: LibTorch threads for the real training (0: the CPUs this process may use; the same "
      "count gives the same numbers)")(
      "force", "reuse a run folder that is not empty: first remove the files a run writes there (manifest.json, the "
      "CSVs, summary.json, timeline.json), nothing else");
  return opts;
}

// The run's options from the command line; a usage error is printed and its exit code returned instead.
std::optional<int> read_sim_options(const po::variables_map& vm, const scenarios::Scenario& scenario,
                                    const std::vector<std::string>& argv, sim::SimOptions& options) {
  options.output_dir = vm.count("out") ? vm["out"].as<std::string>() : scenario.outputs.dir + "/" + scenario.name;
  options.argv = argv;
  options.manifest_fields["omnilearn_version"] = version_string();
  options.iteration_rows = !vm.count("no-iterations");
  options.timeline = !vm.count("no-timeline");
  if (vm.count("force")) options.reuse = run::FolderReuse::kReplace;
  for (const char* key : {"cfg", "log"}) {
    if (!vm.count(key)) continue;
    for (const std::string& v : vm[key].as<std::vector<std::string>>()) {
      options.simgrid_args.push_back(std::string("--") + key + "=" + v);
    }
  }
  const std::string plan_rows = vm["plan-rows"].as<std::string>();
  if (plan_rows == "full") {
    options.plan_rows = run::PlanRows::kFull;
  } else if (plan_rows == "changes") {
    options.plan_rows = run::PlanRows::kChanges;
  } else if (plan_rows != "auto") {
    std::cerr << "omnilearn sim: --plan-rows " << plan_rows << ": expected auto, full or changes\n";
    return 2;
  }
#if defined(OMNILEARN_HAVE_SIM_TRAIN) && !defined(OMNILEARN_HAVE_TORCH_NUMERICS)
  // Virtual-time training needs LibTorch, which this binary does not load: its twin omnilearn-sim-train does.
  if (scenario.workload.numerics == scenarios::Numerics::kReal) return exec_sim_train(argv);
#endif
#ifdef OMNILEARN_HAVE_TORCH_NUMERICS
  // Virtual-time training (workload.numerics: real): the testbed's LibTorch code computes what the simulator times.
  options.numerics = emulator::torch_numerics_factory(emulator::TorchNumericsOptions{vm["threads"].as<int>()});
  if (scenario.workload.numerics == scenarios::Numerics::kReal) {
    options.manifest_fields["numerics_threads"] = std::to_string(vm["threads"].as<int>());
  }
#endif
  return std::nullopt;
}

void print_summary(const scenarios::Scenario& scenario, const sim::SimOptions& options, const run::RunSummary& s) {
  std::printf("%s: %s %s, %lld workers, %lld iterations, %lld epochs\n", scenario.name.c_str(),
              s.mode.c_str(), s.policy.c_str(), static_cast<long long>(s.workers),
              static_cast<long long>(s.iterations), static_cast<long long>(s.epochs));
  std::printf("  total %.2f s, mean iteration %.4f s, idle %.1f%%, %lld decisions, %lld batch changes\n",
              s.total_time_s, s.mean_iteration_s, 100.0 * s.idle_fraction,
              static_cast<long long>(s.decisions), static_cast<long long>(s.batch_changes));
  if (s.final_accuracy) {
    std::printf("  final accuracy %.4f", *s.final_accuracy);
    if (s.time_to_target_s) std::printf(", target reached at %.2f s (simulated)", *s.time_to_target_s);
    std::printf("\n");
  }
  if (s.mean_staleness) {
    std::printf("  staleness mean %.2f, max %lld\n", *s.mean_staleness,
                static_cast<long long>(s.max_staleness.value_or(0)));
  }
  std::printf("  run folder: %s\n", options.output_dir.c_str());
}

}  // namespace

int run_sim_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  const po::options_description opts = sim_options();
  po::variables_map vm;
  if (auto done = parse_command_line("sim", args, opts, "scenario", /*required=*/true, vm)) return *done;
  std::vector<std::string> overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (vm.count("seed")) overrides.push_back("seed=" + std::to_string(vm["seed"].as<std::uint64_t>()));
  const std::string& path = vm["scenario"].as<std::string>();
  if (auto kind = scenarios::read_scenario_kind(path); kind && *kind == scenarios::ScenarioKind::kHybrid) {
    return run_hybrid_sim(path, overrides, vm.count("out") ? vm["out"].as<std::string>() : std::string(),
                          vm.count("force") > 0, vm.count("quiet") > 0);
  }
  if (auto kind = scenarios::read_scenario_kind(path); kind && *kind == scenarios::ScenarioKind::kHybridTestbed) {
    std::cerr << "omnilearn sim: " << path << ": a pipeline testbed spec (kind: hybrid-testbed) runs on this host, "
              << "its prediction beside it: run it with omnilearn emulate " << path << "\n";
    return 1;
  }
  if (auto kind = scenarios::read_scenario_kind(path); kind && *kind == scenarios::ScenarioKind::kJobs) {
    std::cerr << "omnilearn sim: " << path << ": a jobs scenario (kind: jobs): run it with omnilearn jobs run " << path
              << "\n";
    return 1;
  }
  auto scenario = scenarios::load_scenario(path, overrides);
  if (!scenario) {
    std::cerr << "omnilearn sim: " << scenario.status().message() << "\n";
    return 1;
  }
  sim::SimOptions options;
  if (auto usage = read_sim_options(vm, *scenario, argv, options)) return *usage;
  ProgressBar bar("sim " + scenario->name, !vm.count("quiet"));
  options.progress = [&bar](double done) { bar.update(done); };
  const StopSignals signals;
  options.stop_requested = [] { return StopSignals::received() != 0; };
  auto summary = sim::run_simulation(*scenario, options);
  bar.finish();
  // A signal that came after the run finished (its summary.json written) stopped nothing: report the run.
  if (const int signo = StopSignals::received(); signo != 0 && !summary) {
    std::cerr << "omnilearn sim: stopped by " << strsignal(signo) << " (" << (signo == SIGINT ? "SIGINT" : "SIGTERM")
              << "); the rows so far are in " << options.output_dir << " (timeline.json closed, no summary.json)\n";
    if (!summary && summary.status().message().find("stopped on request") == std::string::npos) {
      std::cerr << "omnilearn sim: " << summary.status().message() << "\n";
    }
    return 128 + signo;
  }
  if (!summary) {
    std::cerr << "omnilearn sim: " << scenario->source_path << ": " << summary.status().message() << "\n";
    return 1;
  }
  print_summary(*scenario, options, *summary);
  return 0;
}

}  // namespace omnilearn::cli
