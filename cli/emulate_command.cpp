// `omnilearn emulate`: run one scenario on this host's real testbed (worker processes under cgroup CPU quotas,
// LibTorch + Gloo), write its run folder, print a summary.
#include <boost/program_options.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <utility>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/node_placement.h"
#include "cli/pipeline_testbed_command.h"
#include "omnilearn/emulator/cgroup_cleanup.h"
#include "omnilearn/emulator/join_secret.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/scenarios/scenario_kind.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::cli {

namespace po = boost::program_options;

namespace {

// `omnilearn emulate --cleanup`: every run does this at its start; this does it on demand.
int run_cgroup_cleanup() {
  const emulator::CgroupCleanup done = emulator::remove_stale_cgroups();
  for (const std::string& f : done.removed) std::printf("removed %s\n", f.c_str());
  if (done.removed.empty() && done.status.is_ok()) std::printf("no stale cgroups\n");
  if (!done.status.is_ok()) {
    std::cerr << "omnilearn emulate --cleanup: " << done.status.message() << "\n";
    return 1;
  }
  return 0;
}

// The options of `omnilearn emulate`, with its help text.
po::options_description emulate_options() {
  po::options_description opts(
      "omnilearn emulate SCENARIO [options]\n\n"
      "Runs SCENARIO (the same YAML files as `omnilearn sim`) on this host: one worker process per scenario worker,\n"
      "each in its own cgroup with a CPU quota (scenario cores scaled onto emulator.cpu_budget host cores), training\n"
      "a LeNet-sized CNN (or a small ResNet) on Fashion-MNIST with BSP over Gloo. Writes the run folder with the\n"
      "simulator's schema (manifest.json, iterations.csv, plans.csv, availability.csv, evaluations.csv,\n"
      "summary.json, timeline.json) and config.json, the resolved settings every worker reads. Needs write access to\n"
      "the cgroup tree (root) and the Debian package dataset-fashion-mnist. Exit codes: 0 done, 1 failure (a worker\n"
      "died: the others are stopped), 2 usage, 130 SIGINT, 143 SIGTERM. The run folder must be new or empty (--force\n"
      "replaces an earlier run's files there) and is locked while the run lasts.\n\n"
      "Testbed settings are the scenario's `emulator:` section; `--set emulator.<key>=<value>` overrides any of them:\n"
      "network (lenet|resnet), device (cpu|cuda), cpu_budget, cpu_per_core, cpu_period_s, throttle (compute|process),\n"
      "cpuset, sample_cost_s, target_accuracy, eval_every, eval_samples, time_budget_s, learning_rate, momentum,\n"
      "lr_scaling, warmup_updates, stall_timeout_s, stop_grace_s, data_source, cache_dir (scenarios/README.md).\n"
      "--device, --time-budget and --target-accuracy are short for the same fields.\n"
      "ASP (mode: asp) follows workload.asp (docs/asp-rules.md): update (gradient | model-overwrite), pull\n"
      "(every-push | per-epoch, its barrier's epochs floor | ceil), rule (asgd | staleness-aware | dc-asgd | ssp |\n"
      "ringmaster | rescaled | staleness-bounded) with staleness_bound (ssp), delay_threshold (ringmaster,\n"
      "staleness-bounded) and dc_lambda (dc-asgd).\n"
      "A `kind: hybrid-testbed` spec (scenarios/hybrid/testbed-*.yaml) runs a pipeline instead: one process per\n"
      "(replica, stage) at its CPU share, 1F1B over Gloo, against hybrid::run_pipeline fed with the run's own\n"
      "calibration; writes pipeline.json, calibration.csv, steps.csv, stages.csv, timeline.csv and validation.json\n"
      "(default folder runs/<name>; --set and --seed apply). docs/testbed.md, \"A pipeline under cgroup quotas\".\n\n"
      "examples:\n"
      "  omnilearn emulate scenarios/hybrid/testbed-4stage.yaml --seed 2 --out runs/pipe-4stage\n"
      "  omnilearn emulate scenarios/testbed/bsp-hl8.yaml\n"
      "  omnilearn emulate scenarios/testbed/bsp-hl8.yaml --set policy.name=uniform --out runs/tb-hl8-uniform\n"
      "  omnilearn emulate scenarios/testbed/bsp-hl2.yaml --set emulator.cpu_budget=1.0 --target-accuracy 0.8\n"
      "  omnilearn emulate scenarios/testbed/bsp-hl1.yaml --set workload.dataset_samples=4096 --set emulator.eval_every=20\n"
      "  omnilearn emulate scenarios/testbed/bsp-azure-trace.yaml --time-budget 120\n"
      "  omnilearn emulate S.yaml --nnodes 2 --node-rank 0 --master 10.0.0.1:29500 --bind 10.0.0.1 --out runs/x\n"
      "  omnilearn emulate S.yaml --nnodes 2 --node-rank 1 --master 10.0.0.1:29500 --bind 10.0.0.2 --out runs/x\n\n"
      "Several hosts (BSP): each host runs a launcher for its contiguous share of the workers; rank 0 (node 0) serves\n"
      "the c10d TCPStore on --master, Gloo binds --bind. Node 0 writes the run folder (with derived iteration rows\n"
      "of the other nodes' workers); node r writes its workers' measured rows to <out>/node<r>/. Every node needs the\n"
      "same shared secret (--secret-file or OMNILEARN_SECRET). Without --nnodes, --node-rank or --master, torchrun's\n"
      "(NNODES or WORLD_SIZE, NODE_RANK or RANK, MASTER_ADDR, MASTER_PORT) or SLURM's variables are read.\n\n"
      "options");
  opts.add_options()("help,h", "print this help")("scenario", po::value<std::string>(), "scenario YAML file")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field: --set path.to.key=value (repeatable)")(
      "out", po::value<std::string>(), "run folder (default: <outputs.dir>/<scenario name>)")(
      "seed", po::value<std::string>(), "seed (short for --set seed=)")(
      "device", po::value<std::string>(), "cpu or cuda (short for --set emulator.device=; cuda: each worker gets an MPS "
      "share of the GPU in proportion to its scenario cores, and availability changes become a 100 ms freezer duty cycle)")(
      "target-accuracy", po::value<std::string>(), "stop at this test accuracy (short for --set emulator.target_accuracy=; "
      "default 0.85, 0: none)")(
      "time-budget", po::value<std::string>(), "stop after this many seconds of training (short for --set "
      "emulator.time_budget_s=; default: none)")(
      "nnodes", po::value<int>()->default_value(1), "hosts that share the run (each runs this command)")(
      "node-rank", po::value<int>()->default_value(0), "this host's index in [0, --nnodes); node 0 hosts rank 0")(
      "master", po::value<std::string>(), "ADDR:PORT of node 0 where rank 0 serves the TCPStore (--nnodes > 1)")(
      "bind", po::value<std::string>(), "this host's address that Gloo binds (--nnodes > 1)")(
      "secret-file", po::value<std::string>(), "--nnodes > 1: a file (chmod 600) holding the run's shared secret, the "
                     "same on every node (default: the environment variable OMNILEARN_SECRET); nodes prove they know "
                     "it before joining")(
      "cleanup", "remove the cgroups that launchers killed with SIGKILL left behind (never a live run's), print "
                 "them and exit; no SCENARIO")(
      "force", "reuse a run folder that is not empty: first remove the files a run writes there (manifest.json, the "
      "CSVs, summary.json, timeline.json, config.json), nothing else");
  return opts;
}

// --set, then the short flags as the overrides they stand for.
std::vector<std::string> scenario_overrides(const po::variables_map& vm) {
  std::vector<std::string> overrides =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const std::pair<const char*, const char*> shorts[] = {{"seed", "seed"},
                                                        {"device", "emulator.device"},
                                                        {"target-accuracy", "emulator.target_accuracy"},
                                                        {"time-budget", "emulator.time_budget_s"}};
  for (const auto& [flag, field] : shorts) {
    if (vm.count(flag)) overrides.push_back(std::string(field).append("=").append(vm[flag].as<std::string>()));
  }
  return overrides;
}

// A `kind: hybrid-testbed` spec: --set, --seed and --out apply; the other options are the training testbed's.
int emulate_pipeline(const po::variables_map& vm, const std::vector<std::string>& overrides) {
  for (const char* flag : {"device", "target-accuracy", "time-budget", "master", "bind", "secret-file"}) {
    if (vm.count(flag)) {
      std::cerr << "omnilearn emulate: --" << flag << " does not apply to a pipeline testbed spec (kind: hybrid-testbed)\n";
      return 2;
    }
  }
  if (vm["nnodes"].as<int>() != 1) {
    std::cerr << "omnilearn emulate: a pipeline testbed spec (kind: hybrid-testbed) runs on one host\n";
    return 2;
  }
  return run_pipeline_testbed_emulation(vm["scenario"].as<std::string>(), overrides,
                                        vm.count("out") ? vm["out"].as<std::string>() : std::string());
}

// --nnodes, --node-rank, --master, --bind and the secret; usage errors are printed (exit 2).
std::optional<int> read_node_options(const po::variables_map& vm, emulator::NodeOptions& nodes) {
  if (vm.count("bind")) nodes.bind_addr = vm["bind"].as<std::string>();
  // --nnodes, --node-rank, --master; what they leave out comes from torchrun's or SLURM's variables.
  if (Status placed = place_node_from_command_line(vm, nodes); !placed) {
    std::cerr << "omnilearn emulate: " << placed.message() << "\n";
    return 2;
  }
  if (nodes.nnodes <= 1) return std::nullopt;
  if (vm.count("secret-file")) {
    auto secret = emulator::read_secret_file(vm["secret-file"].as<std::string>());
    if (!secret) {
      std::cerr << "omnilearn emulate: " << secret.status().message() << "\n";
      return 2;
    }
    nodes.secret = *secret;
  } else if (const char* env = std::getenv(emulator::kSecretEnv)) {
    nodes.secret = env;
  }
  return std::nullopt;
}

int print_result(const scenarios::Scenario& scenario, const emulator::LaunchOptions& options,
                 const emulator::LaunchResult& result) {
  if (result.exit_code != 0) {
    std::cerr << "omnilearn emulate: " << result.message << "\n"
              << "  what was written so far is in " << result.run_dir << " (no summary.json)\n";
    return result.exit_code;
  }
  if (options.nodes.node_rank != 0) {
    std::printf("%s: node %d of %d done; its workers' rows -> %s (node 0 writes the summary)\n", scenario.name.c_str(),
                options.nodes.node_rank, options.nodes.nnodes, result.run_dir.c_str());
    return 0;
  }
  const run::RunSummary& s = result.summary;
  std::printf("%s: %s %s, %lld workers, %lld iterations, %lld epochs -> %s\n", scenario.name.c_str(), s.mode.c_str(),
              s.policy.c_str(), static_cast<long long>(s.workers), static_cast<long long>(s.iterations),
              static_cast<long long>(s.epochs), result.run_dir.c_str());
  std::printf("  total %.2f s, mean iteration %.4f s, idle %.1f%%, %lld decisions, %lld batch changes\n", s.total_time_s,
              s.mean_iteration_s, 100.0 * s.idle_fraction, static_cast<long long>(s.decisions),
              static_cast<long long>(s.batch_changes));
  if (s.final_accuracy) std::printf("  final test accuracy %.4f\n", *s.final_accuracy);
  if (s.time_to_target_s) {
    std::printf("  time to target %.2f s (training time, evaluations excluded)\n", *s.time_to_target_s);
  } else if (scenario.emulator.target_accuracy > 0) {
    std::printf("  target accuracy %.2f not reached\n", scenario.emulator.target_accuracy);
  }
  return 0;
}

}  // namespace

int run_emulate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  const po::options_description opts = emulate_options();
  po::variables_map vm;
  const bool cleanup = std::find(args.begin(), args.end(), "--cleanup") != args.end();
  if (auto done = parse_command_line("emulate", args, opts, "scenario", /*required=*/!cleanup, vm)) return *done;
  if (vm.count("cleanup")) return run_cgroup_cleanup();
  const std::vector<std::string> overrides = scenario_overrides(vm);
  if (auto kind = scenarios::read_scenario_kind(vm["scenario"].as<std::string>());
      kind && *kind == scenarios::ScenarioKind::kHybridTestbed) {
    return emulate_pipeline(vm, overrides);
  }
  auto scenario = scenarios::load_scenario(vm["scenario"].as<std::string>(), overrides);
  if (!scenario) {
    std::cerr << "omnilearn emulate: " << scenario.status().message() << "\n";
    return 1;
  }
  emulator::LaunchOptions options;
  options.output_dir = vm.count("out") ? vm["out"].as<std::string>() : scenario->outputs.dir + "/" + scenario->name;
  options.argv = argv;
  if (vm.count("force")) options.reuse = run::FolderReuse::kReplace;
  options.overrides = overrides;
  if (auto usage = read_node_options(vm, options.nodes)) return *usage;
  auto result = emulator::run_emulation(*scenario, options);
  if (!result) {
    std::cerr << "omnilearn emulate: " << scenario->source_path << ": " << result.status().message() << "\n";
    return 1;
  }
  return print_result(*scenario, options, *result);
}

}  // namespace omnilearn::cli
