#include "omnilearn/run/jobs_run_setup.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "omnilearn/base/install_layout.h"
#include "omnilearn/run/gpu_table_power.h"
#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/scenarios/scenario_kind.h"
#include "omnilearn/traces/gpu_power_table.h"
#include "omnilearn/traces/job_importer.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::run {

namespace ot = omnilearn::traces;
namespace os = omnilearn::scenarios;

namespace {

// A string as a YAML scalar (a JSON string is a YAML double-quoted scalar).
std::string yaml_string(const std::string& s) { return nlohmann::json(s).dump(); }

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

// The device tables, cluster and, where jobs need them, the packed pairs and metric curves of `s`.
Status load_tables(const JobsRunRequest& request, JobsRunSetup& r) {
  const os::JobsScenario& s = r.scenario;
  if (!request.shipped_device_tables && (s.device_kinds.empty() || s.device_speeds.empty())) {
    return Status::invalid_argument(request.jobs +
                                    ": the testbed's device kinds and speeds (devices.kinds, devices.speeds or "
                                    "--kinds, --speeds; scenarios/testbed/jobs/ ships a pair)");
  }
  auto speeds =
      ot::read_device_speed_table(s.device_kinds.empty() ? shipped_device_table("device-kinds.csv") : s.device_kinds,
                                  s.device_speeds.empty() ? shipped_device_table("device-speeds.csv") : s.device_speeds);
  if (!speeds) return speeds.status();
  r.speeds = std::move(speeds).value();
  if (s.packing) {
    auto t = ot::read_packed_speed_table(s.packed_speeds.empty() ? shipped_device_table("packed-speeds.csv")
                                                                 : s.packed_speeds);
    if (!t) return t.status();
    r.packed_speeds = std::move(t).value();
  }
  auto cluster = load_named_device_cluster(s.cluster);
  if (!cluster) return cluster.status();
  r.cluster = std::move(cluster).value();
  return Status::ok();
}

// The workload's jobs with the scenario's job policy and ASP rule; the metric curves when a job trains to a target;
// Pollux's job model when the scenario asks for it.
Status load_jobs(JobsRunSetup& r) {
  const os::JobsScenario& s = r.scenario;
  auto workload = scenario_workload(s, r.cluster, *r.speeds);
  if (!workload) return workload.status();
  r.jobs = std::move(workload->jobs);
  r.workload_note = std::move(workload->note);
  for (ot::JobSpec& j : r.jobs) {
    if (!s.job_policy.empty()) j.batch_policy = s.job_policy;
    if (!s.asp_rule.empty() && j.mode == ot::JobMode::kAsp) j.asp_rule = s.asp_rule;
  }
  // Jobs with a target and no epochs train until the model's measured metric curve reaches it.
  if (std::any_of(r.jobs.begin(), r.jobs.end(), [](const ot::JobSpec& j) { return j.epochs <= 0.0; })) {
    auto t = ot::read_metric_curve_table(shipped_device_table("metric-curves.csv"));
    if (!t) return t.status();
    r.metric_curves = std::move(t).value();
  }
  // Pollux's measured job model (step_model, statistical_efficiency; docs/jobs.md).
  if (s.step_model == "measured" || s.statistical_efficiency) {
    auto t = ot::PolluxJobModel::read(shipped_device_table("pollux-steps.csv"),
                                      shipped_device_table("pollux-efficiency.csv"));
    if (!t) return t.status();
    r.pollux = std::move(t).value();
  }
  return Status::ok();
}

}  // namespace

std::string shipped_device_table(const std::string& file) {
  const InstallLayout layout = current_install_layout();
  const std::string rel = "traces/devices/" + file;
  return layout.data_dir.empty() ? rel : (layout.data_dir / rel).string();
}

Result<scenarios::DeviceCluster> load_named_device_cluster(const std::string& name) {
  if (name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml")) {
    return scenarios::load_device_cluster(name);
  }
  const InstallLayout layout = current_install_layout();
  auto file = scenarios::device_cluster_preset_file(name, layout.data_dir.empty() ? "." : layout.data_dir.string());
  if (!file.is_ok()) return file.status();
  return scenarios::load_device_cluster(*file);
}

Result<GeneratedWorkload> generate_workload(ot::PhillyLikeOptions o, const std::string& from) {
  if (!from.empty()) {
    ot::JobImportOptions in;
    in.input = from;
    in.min_duration_s = 60.0;  // as Pollux's generator filters the trace
    auto sizes = ot::read_philly_sizes(in);
    if (!sizes.is_ok()) return sizes.status();
    o.sizes = std::move(sizes).value();
  }
  auto g = ot::generate_philly_like(o);
  if (!g.is_ok()) return g.status();
  const std::string note = from.empty() ? ot::philly_size_distribution_note() : "sizes drawn from " + from;
  return GeneratedWorkload{std::move(g->jobs), note + "\nseed=" + std::to_string(o.seed) +
                                                   " arrival_rate_per_s=" + ot::shortest_number(g->arrival_rate_per_s) +
                                                   " mean_gpu_seconds=" + ot::shortest_number(g->mean_gpu_seconds),
                           g->arrival_rate_per_s};
}

Result<ScenarioWorkload> scenario_workload(const scenarios::JobsScenario& s, const scenarios::DeviceCluster& cluster,
                                           const ot::DeviceSpeedTable& speeds) {
  const scenarios::JobsWorkload& w = s.workload;
  if (w.source == scenarios::JobsWorkloadSource::kFile) {
    auto jobs = ot::read_job_file(w.file);
    if (!jobs.is_ok()) return jobs.status();
    return ScenarioWorkload{std::move(jobs).value(), ""};
  }
  const auto mode = ot::parse_job_mode(w.mode);
  if (!mode) return Status::invalid_argument(s.source_path + ": workload.mode: '" + w.mode + "'; expected bsp or asp");
  if (w.source == scenarios::JobsWorkloadSource::kGenerate) {
    ot::PhillyLikeOptions o;
    o.jobs = static_cast<std::size_t>(w.jobs);
    o.load = w.load;
    o.cluster_gpus = cluster.gpus();
    o.seed = s.seed;
    o.conversion = {&speeds, w.reference_device, w.batch_policy, *mode};
    auto g = generate_workload(o, w.from);
    if (!g.is_ok()) return g.status();
    return ScenarioWorkload{std::move(g->jobs), "generated for scenario " + s.name + "\n" + g->note};
  }
  ot::JobImportOptions o;
  const auto format = ot::parse_job_import_format(w.format);
  if (!format) return Status::invalid_argument(s.source_path + ": workload.import.format: '" + w.format + "'");
  o.format = *format;
  o.input = w.input;
  o.batch_policy = w.batch_policy;
  o.mode = *mode;
  o.cluster = w.import_cluster;
  o.min_duration_s = w.min_duration_s;
  if (w.clip) std::tie(o.clip_from_s, o.clip_to_s) = *w.clip;
  o.max_jobs = static_cast<std::size_t>(w.max_jobs);
  o.seed = s.seed;
  o.philly.speeds = &speeds;
  o.philly.reference_device = w.reference_device;
  auto jobs = ot::import_jobs(o);
  if (!jobs.is_ok()) return jobs.status();
  return ScenarioWorkload{std::move(jobs).value(), "imported for scenario " + s.name + " from " + w.input};
}

Result<os::JobsScenario> load_jobs_run_scenario(const std::string& jobs,
                                                       const std::vector<ScenarioOverride>& overrides) {
  std::vector<std::string> texts;
  for (const ScenarioOverride& o : overrides) texts.push_back(o.text);
  auto scenario = load_scenario_file(jobs, texts);
  if (scenario) return scenario;
  std::string message = scenario.status().message();
  for (const ScenarioOverride& o : overrides) {
    const std::string set = "(--set " + o.text + ")";
    const std::size_t at = message.find(set);
    if (!o.option.empty() && at != std::string::npos) message.replace(at, set.size(), "(" + o.option + ")");
  }
  return Status::invalid_argument(message);
}

namespace {

// Each kind's per-GPU figures with energy (docs/energy.md, "Several jobs"), by the single runs' rule for the hpc
// preset (scenarios::preset_power): the kind's own (scenarios::device_kind_power), with the busy curve and the blocked
// figure read from the measured table where it has the kind (the preset's workload and limit, flat outside the
// measured batches; run::resolve_gpu_table), then energy.gpu's fields. Kinds the table lacks keep their figures,
// labelled (`assumed law`, `preset`). A table that cannot be read leaves every kind its own figures unless energy.gpu
// names the table.
Status resolve_kind_power(JobsRunSetup& r) {
  const os::EnergySpec& energy = *r.scenario.energy;
  auto table = ot::read_gpu_power_table(shipped_device_table("zeus-power.csv"));
  for (const os::DeviceGroup& g : r.cluster.groups) {
    os::DevicePower p = os::device_kind_power(g.device).value_or(os::DevicePower{});
    if (table && !table->batches(g.device, std::string(os::kHpcTableWorkload)).empty()) {
      p.table = os::GpuTableRef{g.device, std::string(os::kHpcTableWorkload), os::kHpcTableLimitW,
                                /*refuse_outside=*/false};
    }
    p.override_with(energy.gpu);
    if (p.table) {
      if (!table) return Status::invalid_argument("energy.gpu.table: " + table.status().message());
      const bool idle_from_table = energy.gpu.table.has_value() && !energy.gpu.idle_w;
      OMNI_RETURN_IF_ERROR(resolve_gpu_table(p, *table, idle_from_table, "energy.gpu.table"));
    }
    r.power[g.device] = std::move(p);
  }
  return Status::ok();
}

}  // namespace

Result<JobsRunSetup> resolve_jobs_run(const JobsRunRequest& request) {
  auto scenario = load_jobs_run_scenario(request.jobs, request.overrides);
  if (!scenario) return scenario.status();
  JobsRunSetup r;
  r.scenario = std::move(scenario).value();
  if (request.energy && !r.scenario.energy) r.scenario.energy.emplace();
  const os::JobsScenario& s = r.scenario;
  r.out_dir = !request.out.empty() ? request.out
                                   : (std::filesystem::path(s.outputs_dir) / (s.name + request.out_suffix)).string();
  OMNI_RETURN_IF_ERROR(load_tables(request, r));
  OMNI_RETURN_IF_ERROR(load_jobs(r));
  if (s.energy) OMNI_RETURN_IF_ERROR(resolve_kind_power(r));
  return r;
}

}  // namespace omnilearn::run
