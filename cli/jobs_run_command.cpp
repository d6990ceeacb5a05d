// `omnilearn jobs run`: simulate a jobs scenario (a `kind: jobs` YAML) or a job file on a device cluster under a
// scheduler. A job file is read as the scenario {kind: jobs, workload: {file: JOBS}}, and every option given on
// the command line becomes an override of its key (before --set and --seed), so that a file and the equivalent
// options go through one path.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "cli/jobs_command.h"
#include "cli/progress_bar.h"
#include "cli/stop_signals.h"
#include "cli/subcommand_line.h"
#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/run/jobs_run_setup.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/sim/cluster_sim_setup.h"
#include "omnilearn/sim/cluster_simulation.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;

int fail(const Status& status) { return omnilearn::cli::fail_with("omnilearn jobs run", status); }

// A string as a YAML scalar an override takes whatever it holds (a JSON string is a YAML double-quoted scalar).
std::string yaml_string(const std::string& s) { return nlohmann::json(s).dump(); }

// The overrides the options given on the command line stand for, in option order.
std::vector<run::ScenarioOverride> option_overrides(const po::variables_map& vm) {
  std::vector<run::ScenarioOverride> out;
  auto given = [&](const char* key) { return vm.count(key) && !vm[key].defaulted(); };
  // (option, scenario key, is a string)
  const std::vector<std::tuple<const char*, const char*, bool>> plain = {
      {"cluster", "cluster", true},   {"scheduler", "scheduler", true},        {"round", "round", false},
      {"checkpoint", "checkpoint", false}, {"restore", "restore", false},      {"placement", "placement", true},
      {"job-policy", "job_policy", true},  {"asp-rule", "asp_rule", true}, {"node-bandwidth", "node_bandwidth", false},
      {"max-time", "max_time", false}, {"kinds", "devices.kinds", true},       {"speeds", "devices.speeds", true},
      {"packed-speeds", "devices.packed_speeds", true}};
  for (const auto& [option, key, text] : plain) {
    if (!given(option)) continue;
    const std::string v = vm[option].as<std::string>();
    out.push_back({std::string(key) + "=" + (text ? yaml_string(v) : v), std::string("--") + option + " " + v});
  }
  if (vm.count("packing") && vm["packing"].as<bool>()) out.push_back({"packing=true", "--packing"});
  if (given("wait")) {
    const std::string w = vm["wait"].as<std::string>();
    out.push_back({"energy.wait=" + yaml_string(w), "--wait " + w});
  }
  if (given("las-thresholds")) {
    std::string list;
    for (const std::string& t : vm["las-thresholds"].as<std::vector<std::string>>()) list += (list.empty() ? "" : ", ") + t;
    out.push_back({"las_thresholds=[" + list + "]", "--las-thresholds " + list});
  }
  if (given("parameters")) {
    for (const std::string& p : vm["parameters"].as<std::vector<std::string>>()) {
      const std::size_t eq = p.find('=');
      // A malformed value becomes a key the parser refuses, naming it.
      out.push_back({eq == std::string::npos || eq == 0 ? "parameters." + yaml_string(p) + "=0"
                                                        : "parameters." + p.substr(0, eq) + "=" + p.substr(eq + 1),
                     "--parameters " + p});
    }
  }
  if (given("set")) {
    for (const std::string& s : vm["set"].as<std::vector<std::string>>()) out.push_back({s, ""});
  }
  if (given("seed")) out.push_back({"seed=" + vm["seed"].as<std::string>(), "--seed " + vm["seed"].as<std::string>()});
  return out;
}

}  // namespace

std::vector<run::ScenarioOverride> jobs_run_overrides(const po::variables_map& vm) { return option_overrides(vm); }

namespace {

struct RunFlags {
  std::string file;
  std::string out;
  bool force = false;
  bool quiet = false;
};

// `jobs run`'s options: each overrides its scenario key (option_overrides), then --set, then --seed.
po::options_description jobs_run_options(RunFlags& f) {
  po::options_description desc(
      "omnilearn jobs run JOBS: simulate a jobs scenario (a `kind: jobs` YAML, scenarios/README.md) or a job file\n"
      "(traces/JOBS.md) on a heterogeneous cluster under a scheduler. Each option below overrides its scenario key\n"
      "(defaults in brackets are the scenario's); then --set, then --seed");
  desc.add_options()("help,h", "show this help")("jobs", po::value(&f.file)->required(),
                                                 "jobs scenario (.yaml) or job file (.csv)")(
      "cluster", po::value<std::string>(), "device cluster: a preset (gavel, sia, pollux) or a cluster YAML file [gavel]")(
      "scheduler", po::value<std::string>(), "fifo | las | gavel | gavel-packed (with --packing) | goodput | balanced-mix; fifo-blind, las-blind [fifo]")(
      "round", po::value<std::string>(), "round length, s [60]")(
      "checkpoint", po::value<std::string>(), "seconds a job spends saving its state when it loses or changes its devices [0]")(
      "restore", po::value<std::string>(), "seconds a job spends loading its state when it resumes or changes its devices [0]")(
      "placement", po::value<std::string>(), "pack | spread [pack]")(
      "job-policy", po::value<std::string>(), "every job's batch policy, instead of the workload's (uniform, omnilearn, ...)")(
      "asp-rule", po::value<std::string>(),
      "every ASP job's server rule, instead of the job file's asp_rule (asgd, ssp:2, ringmaster:8, ...)")(
      "las-thresholds", po::value<std::vector<std::string>>()->multitoken(),
      "las, balanced-mix: attained service (worker-seconds) between the queues, increasing [3600 36000]")(
      "node-bandwidth", po::value<std::string>(), "a node's link in bytes/s where the cluster file states none [1.25e9]")(
      "max-time", po::value<std::string>(), "stop the simulation there, s (0: when all end) [0]")(
      "packing", po::bool_switch(),
      "pack a waiting one-worker job onto a device a one-worker job holds where both gain (Gavel's measured pairs)")(
      "parameters", po::value<std::vector<std::string>>()->composing(),
      "MODEL=N: the parameter count of a model the simulator does not know (repeatable)")(
      "kinds", po::value<std::string>(), "device kinds table [the shipped traces/devices/device-kinds.csv]")(
      "speeds", po::value<std::string>(), "device speeds table [the shipped traces/devices/device-speeds.csv]")(
      "energy", po::bool_switch(),
      "energy per job and per cluster (jobs.csv energy_j ..., summary.json energy; docs/energy.md)")(
      "wait", po::value<std::string>(),
      "with energy (implies --energy): a worker waiting at the barrier draws auto (a V100 or P100 its lowest measured "
      "power, from the measured table; other kinds busy: a GPU polls in NCCL) | idle | busy | W [auto]")(
      "packed-speeds", po::value<std::string>(),
      "packed-pair table, with --packing [the shipped traces/devices/packed-speeds.csv]")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario key: --set path.to.key=value (repeatable), e.g. --set workload.generate.jobs=40")(
      "seed", po::value<std::string>(), "the scenario's seed (a generated or imported workload's draws) [1]")(
      "out", po::value(&f.out), "run folder: jobs.csv, allocations.csv, summary.json, timeline.json, manifest.json "
                                "[<outputs.dir>/<name>]")(
      "force", po::bool_switch(&f.force), "replace an earlier run's files in --out")(
      "quiet", po::bool_switch(&f.quiet), "no progress line");
  return desc;
}

void print_summary(const sim::ClusterSummary& summary, const std::string& scheduler, const std::string& cluster,
                   const std::string& file, const std::string& out) {
  std::printf("%s on %s (%s): %zu/%zu jobs done, mean JCT %.6g s, median %.6g s, p99 %.6g s, makespan %.6g s\n",
              scheduler.c_str(), cluster.c_str(), file.c_str(), summary.finished, summary.jobs.size(),
              summary.mean_jct_s, summary.median_jct_s, summary.p99_jct_s, summary.makespan_s);
  std::printf("  utilisation:");
  for (const auto& [kind, u] : summary.utilisation) std::printf(" %s %.1f%%", kind.c_str(), 100.0 * u);
  std::printf("\n  finish-time fairness: mean rho %.3g, max rho %.3g\n", summary.mean_rho, summary.max_rho);
  if (summary.energy) {
    const sim::ClusterEnergy& e = *summary.energy;
    std::printf("  energy: %.6g J (jobs %.6g J, unallocated devices idle %.6g J), average power %.6g W (wait: %s)\n",
                e.total_j, e.jobs_j, e.unallocated_idle_j, e.average_power_w, e.wait.c_str());
  }
  std::printf("  run folder: %s\n", out.c_str());
}

}  // namespace

int run_jobs_run(const std::vector<std::string>& args) {
  RunFlags f;
  po::options_description desc = jobs_run_options(f);
  po::positional_options_description pos;
  pos.add("jobs", 1);
  const char* examples =
      "  omnilearn jobs run scenarios/jobs/philly-gavel.yaml\n"
      "  omnilearn jobs run scenarios/jobs/philly-gavel.yaml --set scheduler=las --seed 2 --out runs/las-2\n"
      "  omnilearn jobs generate --jobs 20 --load 0.8 --cluster-gpus 108 --seed 1 --output jobs.csv\n"
      "  omnilearn jobs run jobs.csv --cluster gavel --scheduler gavel --out runs/jobs-gavel\n"
      "  omnilearn jobs run jobs.csv --cluster sia --scheduler las --round 360 --restore 30 --out runs/jobs-las\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, examples)) return *done;
  auto setup = run::resolve_jobs_run({f.file, option_overrides(vm), vm["energy"].as<bool>(), f.out, "", true});
  if (!setup) return fail(setup.status());
  const run::JobsRunSetup& s = *setup;
  sim::ClusterSimOptions o = sim::cluster_sim_options(s);
  // Checked before the folder is claimed: with --force a typo would otherwise replace the earlier run's files.
  if (const Status st = sim::check_cluster_simulation(s.jobs, s.cluster, *s.speeds, o); !st.is_ok()) return fail(st);
  auto folder = run::start_jobs_run_folder(s, f.force, nlohmann::ordered_json::object(), version_string());
  if (!folder) return fail(folder.status());
  o.argv = args;
  o.argv.insert(o.argv.begin(), {"omnilearn", "jobs", "run"});
  StopSignals signals;
  o.stop_requested = [] { return StopSignals::received() != 0; };
  ProgressBar bar("jobs", !f.quiet);  // drawn on a terminal only
  o.on_round = [&bar](Seconds now_s, std::size_t done, std::size_t total) {
    bar.update(static_cast<double>(done) / static_cast<double>(total),
               std::to_string(done) + "/" + std::to_string(total) + " jobs done, " +
                   std::to_string(static_cast<long long>(now_s)) + " s simulated");
  };
  auto summary = sim::run_cluster_simulation(s.jobs, s.cluster, *s.speeds, o);
  bar.finish();
  if (!summary) {
    if (const int sig = StopSignals::received(); sig != 0) {
      std::cerr << "omnilearn jobs run: " << summary.status().message() << "; what was simulated is in " << s.out_dir
                << "\n";
      return 128 + sig;
    }
    return fail(summary.status());
  }
  print_summary(*summary, o.scheduler, s.cluster.name, f.file, s.out_dir);
  return 0;
}

}  // namespace omnilearn::cli
