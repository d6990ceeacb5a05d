#include "cli/jobs_workload.h"

#include <limits>

#include "omnilearn/base/install_layout.h"
#include "omnilearn/traces/job_importer.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::cli {

namespace ot = omnilearn::traces;

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

}  // namespace omnilearn::cli
