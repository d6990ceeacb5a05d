// `omnilearn jobs run`: simulate a jobs scenario (a `kind: jobs` YAML) or a job file on a device cluster under a
// scheduler. A job file is read as the scenario {kind: jobs, workload: {file: JOBS}}, and every option given on
// the command line becomes an override of its key (before --set and --seed), so that a file and the equivalent
// options go through one path.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "cli/jobs_command.h"
#include "cli/jobs_workload.h"
#include "cli/progress_bar.h"
#include "cli/stop_signals.h"
#include "cli/subcommand_line.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/scenarios/scenario_kind.h"
#include "omnilearn/sim/cluster_simulation.h"
#include "omnilearn/traces/metric_curves.h"
#include "omnilearn/traces/packed_speeds.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
namespace os = omnilearn::scenarios;
namespace ot = omnilearn::traces;

int fail(const Status& status) {
  std::cerr << "omnilearn jobs run: " << status.message() << "\n";
  return 1;
}

// A string as a YAML scalar an override takes whatever it holds (a JSON string is a YAML double-quoted scalar).
std::string yaml_string(const std::string& s) { return nlohmann::json(s).dump(); }

// An override and the option it came from ("--placement spread"; empty for --set), so that errors name the option.
struct Override {
  std::string text;
  std::string option;
};

// The overrides the options given on the command line stand for, in option order.
std::vector<Override> option_overrides(const po::variables_map& vm) {
  std::vector<Override> out;
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

// The scenario JOBS names: a `kind: jobs` YAML, or a job file read as {kind: jobs, workload: {file: JOBS}}.
Result<os::JobsScenario> load_scenario_file(const std::string& jobs, const std::vector<std::string>& overrides) {
  const bool yaml = jobs.ends_with(".yaml") || jobs.ends_with(".yml");
  if (!yaml) {
    const std::string text = "kind: jobs\nname: " + yaml_string(std::filesystem::path(jobs).stem().string()) +
                             "\nworkload: {file: " + yaml_string(jobs) + "}\n";
    return os::parse_jobs_scenario(text, "(command line)", overrides);
  }
  auto kind = os::read_scenario_kind(jobs);
  if (!kind) return kind.status();
  if (*kind != os::ScenarioKind::kJobs) {
    return Status::invalid_argument(jobs + ": a training scenario (no `kind: jobs`): run it with omnilearn sim " + jobs);
  }
  return os::load_jobs_scenario(jobs, overrides);
}

// As load_scenario_file, with `overrides`; an error about an override an option made names the option.
Result<os::JobsScenario> load_run_scenario(const std::string& jobs, const std::vector<Override>& overrides) {
  std::vector<std::string> texts;
  for (const Override& o : overrides) texts.push_back(o.text);
  auto scenario = load_scenario_file(jobs, texts);
  if (scenario) return scenario;
  std::string message = scenario.status().message();
  for (const Override& o : overrides) {
    const std::string set = "(--set " + o.text + ")";
    const std::size_t at = message.find(set);
    if (!o.option.empty() && at != std::string::npos) message.replace(at, set.size(), "(" + o.option + ")");
  }
  return Status::invalid_argument(message);
}

}  // namespace

Result<os::JobsScenario> load_jobs_run_scenario(const std::string& jobs, const po::variables_map& vm) {
  return load_run_scenario(jobs, option_overrides(vm));
}

int run_jobs_run(const std::vector<std::string>& args) {
  std::string file;
  std::string out;
  bool force = false;
  bool quiet = false;
  po::options_description desc(
      "omnilearn jobs run JOBS: simulate a jobs scenario (a `kind: jobs` YAML, scenarios/README.md) or a job file\n"
      "(traces/JOBS.md) on a heterogeneous cluster under a scheduler. Each option below overrides its scenario key\n"
      "(defaults in brackets are the scenario's); then --set, then --seed");
  desc.add_options()("help,h", "show this help")("jobs", po::value(&file)->required(),
                                                 "jobs scenario (.yaml) or job file (.csv)")(
      "cluster", po::value<std::string>(), "device cluster: a preset (gavel, sia, pollux) or a cluster YAML file [gavel]")(
      "scheduler", po::value<std::string>(), "fifo | las | gavel | gavel-packed (with --packing) | balanced-mix [fifo]")(
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
      "with energy (implies --energy): a worker waiting at the barrier draws auto (busy: a GPU polls in NCCL) | idle | "
      "busy | W [auto]")(
      "packed-speeds", po::value<std::string>(),
      "packed-pair table, with --packing [the shipped traces/devices/packed-speeds.csv]")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario key: --set path.to.key=value (repeatable), e.g. --set workload.generate.jobs=40")(
      "seed", po::value<std::string>(), "the scenario's seed (a generated or imported workload's draws) [1]")(
      "out", po::value(&out), "run folder: jobs.csv, allocations.csv, summary.json, timeline.json, manifest.json "
                              "[<outputs.dir>/<name>]")(
      "force", po::bool_switch(&force), "replace an earlier run's files in --out")(
      "quiet", po::bool_switch(&quiet), "no progress line");
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
  auto scenario = load_jobs_run_scenario(file, vm);
  if (!scenario) return fail(scenario.status());
  if (vm["energy"].as<bool>() && !scenario->energy) scenario->energy.emplace();
  const os::JobsScenario& s = *scenario;
  if (out.empty()) out = (std::filesystem::path(s.outputs_dir) / s.name).string();

  sim::ClusterSimOptions o;
  o.scheduler = s.scheduler;
  o.scheduling.round_s = s.round_s;
  o.scheduling.checkpoint_s = s.checkpoint_s;
  o.scheduling.restore_s = s.restore_s;
  o.scheduling.placement = s.placement == "spread" ? scheduler::Placement::kSpread : scheduler::Placement::kPack;
  if (!s.las_thresholds.empty()) o.scheduling.las_thresholds = s.las_thresholds;
  o.node_bandwidth_Bps = s.node_bandwidth_Bps;
  o.max_time_s = s.max_time_s;
  o.model_parameters = s.parameters;
  o.scheduling.packing = s.packing;
  const auto speeds =
      ot::read_device_speed_table(s.device_kinds.empty() ? shipped_device_table("device-kinds.csv") : s.device_kinds,
                                  s.device_speeds.empty() ? shipped_device_table("device-speeds.csv") : s.device_speeds);
  if (!speeds.is_ok()) return fail(speeds.status());
  std::optional<ot::PackedSpeedTable> packed;
  if (s.packing) {
    auto t = ot::read_packed_speed_table(s.packed_speeds.empty() ? shipped_device_table("packed-speeds.csv")
                                                                 : s.packed_speeds);
    if (!t.is_ok()) return fail(t.status());
    packed = std::move(t).value();
    o.packed_speeds = &*packed;
  }
  const auto cluster = load_named_device_cluster(s.cluster);
  if (!cluster.is_ok()) return fail(cluster.status());
  if (s.energy) {
    sim::ClusterEnergyOptions e;
    e.wait = s.energy->wait;
    e.comm = s.energy->comm;
    for (const os::DeviceGroup& g : cluster->groups) {
      os::DevicePower p = os::device_kind_power(g.device).value_or(os::DevicePower{});
      p.override_with(s.energy->gpu);
      e.power[g.device] = p;
    }
    o.energy = std::move(e);
  }
  auto workload = scenario_workload(s, *cluster, *speeds);
  if (!workload.is_ok()) return fail(workload.status());
  std::vector<ot::JobSpec>& jobs = workload->jobs;
  if (!s.job_policy.empty()) {
    for (ot::JobSpec& j : jobs) j.batch_policy = s.job_policy;
  }
  if (!s.asp_rule.empty()) {
    for (ot::JobSpec& j : jobs) {
      if (j.mode == ot::JobMode::kAsp) j.asp_rule = s.asp_rule;
    }
  }
  // Jobs with a target and no epochs train until the model's measured metric curve reaches it.
  std::optional<ot::MetricCurveTable> curves;
  if (std::any_of(jobs.begin(), jobs.end(), [](const ot::JobSpec& j) { return j.epochs <= 0.0; })) {
    auto t = ot::read_metric_curve_table(shipped_device_table("metric-curves.csv"));
    if (!t.is_ok()) return fail(t.status());
    curves = std::move(t).value();
    o.metric_curves = &*curves;
  }
  // Pollux's measured job model (step_model, statistical_efficiency; docs/jobs.md).
  std::optional<ot::PolluxJobModel> pollux;
  if (s.step_model == "measured" || s.statistical_efficiency) {
    auto t = ot::PolluxJobModel::read(shipped_device_table("pollux-steps.csv"),
                                      shipped_device_table("pollux-efficiency.csv"));
    if (!t.is_ok()) return fail(t.status());
    pollux = std::move(t).value();
    o.pollux = &*pollux;
    o.measured_steps = s.step_model == "measured";
    o.statistical_efficiency = s.statistical_efficiency;
    o.job_model_source = "traces/devices/pollux-steps.csv, pollux-efficiency.csv (Pollux, Apache-2.0, Qiao et al., "
                         "OSDI 2021; petuum/adaptdl @ de25dcc)";
  }
  if (s.las_starvation_s) o.scheduling.las_starvation_s = *s.las_starvation_s;
  // Checked before the folder is claimed: with --force a typo would otherwise replace the earlier run's files.
  if (const Status st = sim::check_cluster_simulation(jobs, *cluster, *speeds, o); !st.is_ok()) return fail(st);
  run::RunFolderOptions folder_options;
  folder_options.reuse = force ? run::FolderReuse::kReplace : run::FolderReuse::kRefuse;
  folder_options.own_files = {"jobs.csv",           "allocations.csv",      "summary.json",      "timeline.json",
                               "manifest.json",      "workload.csv",         ".jobs.csv.tmp",     ".allocations.csv.tmp",
                               ".summary.json.tmp",  ".timeline.json.tmp",   ".manifest.json.tmp", ".workload.csv.tmp"};
  auto folder = run::RunFolder::claim(out, folder_options);
  if (!folder.is_ok()) return fail(folder.status());
  nlohmann::ordered_json manifest;
  manifest["scenario"] = os::jobs_scenario_json(s);
  manifest["omnilearn_version"] = version_string();
  if (const Status st = run::write_file_atomically(out + "/manifest.json", manifest.dump(2) + "\n"); !st.is_ok()) {
    return fail(st);
  }
  if (!workload->note.empty()) {
    if (const Status st = ot::write_job_file(jobs, out + "/workload.csv", workload->note); !st.is_ok()) return fail(st);
  }
  o.output_dir = out;
  o.argv = args;
  o.argv.insert(o.argv.begin(), {"omnilearn", "jobs", "run"});
  StopSignals signals;
  o.stop_requested = [] { return StopSignals::received() != 0; };
  ProgressBar bar("jobs", !quiet);  // drawn on a terminal only
  o.on_round = [&bar](Seconds now_s, std::size_t done, std::size_t total) {
    bar.update(static_cast<double>(done) / static_cast<double>(total),
               std::to_string(done) + "/" + std::to_string(total) + " jobs done, " +
                   std::to_string(static_cast<long long>(now_s)) + " s simulated");
  };
  auto summary = sim::run_cluster_simulation(jobs, *cluster, *speeds, o);
  bar.finish();
  if (!summary.is_ok()) {
    const int sig = StopSignals::received();
    if (sig != 0) {
      std::cerr << "omnilearn jobs run: " << summary.status().message() << "; what was simulated is in " << out << "\n";
      return 128 + sig;
    }
    return fail(summary.status());
  }
  std::printf("%s on %s (%s): %zu/%zu jobs done, mean JCT %.6g s, median %.6g s, p99 %.6g s, makespan %.6g s\n",
              o.scheduler.c_str(), cluster->name.c_str(), file.c_str(), summary->finished, summary->jobs.size(),
              summary->mean_jct_s, summary->median_jct_s, summary->p99_jct_s, summary->makespan_s);
  std::printf("  utilisation:");
  for (const auto& [kind, u] : summary->utilisation) std::printf(" %s %.1f%%", kind.c_str(), 100.0 * u);
  std::printf("\n  finish-time fairness: mean rho %.3g, max rho %.3g\n", summary->mean_rho, summary->max_rho);
  if (summary->energy) {
    const sim::ClusterEnergy& e = *summary->energy;
    std::printf("  energy: %.6g J (jobs %.6g J, unallocated devices idle %.6g J), average power %.6g W (wait: %s)\n",
                e.total_j, e.jobs_j, e.unallocated_idle_j, e.average_power_w, e.wait.c_str());
  }
  std::printf("  run folder: %s\n", out.c_str());
  return 0;
}

}  // namespace omnilearn::cli
