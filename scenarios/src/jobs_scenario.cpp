#include "omnilearn/scenarios/jobs_scenario.h"

#include <cmath>
#include <filesystem>

#include "map_reader.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/scenarios/enum_names.h"
#include "omnilearn/scenarios/scenario_kind.h"
#include "omnilearn/traces/csv_reader.h"
#include "section_parsers.h"
#include "yaml_source.h"

namespace omnilearn::scenarios {
namespace {

using detail::MapReader;
using detail::Range;
using detail::YamlSource;

// A cluster names a preset unless it looks like a file.
bool is_cluster_file(const std::string& name) {
  return name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
}

Status parse_workload(const MapReader& top, const std::filesystem::path& folder, JobsWorkload& w) {
  auto reader = MapReader::open(top.source(), top.get("workload"), "workload",
                                {"file", "generate", "import", "batch_policy", "mode", "reference_device"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  auto resolve = [&](const std::string& p) {
    return std::filesystem::path(p).is_absolute() ? p : (folder / p).lexically_normal().string();
  };
  OMNI_RETURN_IF_ERROR(r.require_one_of({"file", "generate", "import"}));
  OMNI_RETURN_IF_ERROR(r.read("batch_policy", w.batch_policy));
  OMNI_RETURN_IF_ERROR(r.read_choice("mode", w.mode, {{"bsp", std::string("bsp")}, {"asp", std::string("asp")}}));
  OMNI_RETURN_IF_ERROR(r.read("reference_device", w.reference_device));
  if (r.has("file")) {
    w.source = JobsWorkloadSource::kFile;
    OMNI_RETURN_IF_ERROR(r.read("file", w.file));
    w.file = resolve(w.file);
    for (const char* key : {"batch_policy", "mode", "reference_device"}) {
      if (r.has(key)) return r.error(key, "only for a generated or imported workload (a job file states its own)");
    }
    return Status::ok();
  }
  if (r.has("generate")) {
    w.source = JobsWorkloadSource::kGenerate;
    auto g = MapReader::open(r.source(), r.get("generate"), "workload.generate", {"jobs", "load", "from"});
    if (!g) return g.status();
    OMNI_RETURN_IF_ERROR(g->read("jobs", w.jobs, Range::kPositive));
    OMNI_RETURN_IF_ERROR(g->read("load", w.load, Range::kPositive));
    OMNI_RETURN_IF_ERROR(g->read("from", w.from));
    if (!w.from.empty()) w.from = resolve(w.from);
    return Status::ok();
  }
  w.source = JobsWorkloadSource::kImport;
  auto im = MapReader::open(r.source(), r.get("import"), "workload.import",
                            {"format", "input", "cluster", "min_duration", "clip", "max_jobs"});
  if (!im) return im.status();
  for (const char* key : {"format", "input"}) {
    if (!im->has(key)) return im->error(key, "missing (an import needs a format and an input)");
  }
  OMNI_RETURN_IF_ERROR(
      im->read_choice("format", w.format, {{"pollux", std::string("pollux")}, {"philly", std::string("philly")}}));
  OMNI_RETURN_IF_ERROR(im->read("input", w.input));
  w.input = resolve(w.input);
  OMNI_RETURN_IF_ERROR(im->read("cluster", w.import_cluster));
  OMNI_RETURN_IF_ERROR(im->read_duration("min_duration", w.min_duration_s));
  if (im->has("clip")) {
    std::vector<double> clip;
    OMNI_RETURN_IF_ERROR(im->read_numbers("clip", clip, Range::kNonNegative));
    if (clip.size() != 2 || !(clip[0] < clip[1])) return im->error_got("clip", "[T0, T1] seconds with T0 < T1");
    w.clip = std::make_pair(clip[0], clip[1]);
  }
  OMNI_RETURN_IF_ERROR(im->read("max_jobs", w.max_jobs, Range::kNonNegative));
  return Status::ok();
}

// The scheduler and how a run is simulated: round, checkpoint and restore, placement, LAS, the job model, network,
// time limit, packing.
Status parse_scheduling(const MapReader& r, JobsScenario& s) {
  OMNI_RETURN_IF_ERROR(r.read("scheduler", s.scheduler));
  OMNI_RETURN_IF_ERROR(r.read_duration("round", s.round_s));
  if (!(s.round_s > 0.0)) return r.error_got("round", "a positive duration");
  OMNI_RETURN_IF_ERROR(r.read_duration("checkpoint", s.checkpoint_s));
  OMNI_RETURN_IF_ERROR(r.read_duration("restore", s.restore_s));
  if (s.checkpoint_s < 0.0) return r.error_got("checkpoint", "a non-negative duration");
  if (s.restore_s < 0.0) return r.error_got("restore", "a non-negative duration");
  // Pollux's simulator charges its restart penalty at every start, the first included: `on` does the same.
  OMNI_RETURN_IF_ERROR(
      r.read_choice("restore_at_first_start", s.restore_at_first_start, {{"off", false}, {"on", true}}));
  OMNI_RETURN_IF_ERROR(
      r.read_choice("placement", s.placement, {{"pack", std::string("pack")}, {"spread", std::string("spread")}}));
  OMNI_RETURN_IF_ERROR(r.read_numbers("las_thresholds", s.las_thresholds, Range::kPositive));
  if (r.has("las_starvation")) {  // Tiresias's simulator never promotes (its solve_starvation 0): `off`
    if (r.get("las_starvation").IsScalar() && r.get("las_starvation").Scalar() == "off") {
      s.las_starvation_s = 1e300;
    } else {
      double v = 0.0;
      OMNI_RETURN_IF_ERROR(r.read_duration("las_starvation", v));
      if (!(v >= 0.0)) return r.error_got("las_starvation", "a non-negative duration or off");
      s.las_starvation_s = v;
    }
  }
  OMNI_RETURN_IF_ERROR(r.read_choice("step_model", s.step_model,
                                     {{"ring", std::string("ring")}, {"measured", std::string("measured")}}));
  OMNI_RETURN_IF_ERROR(
      r.read_choice("statistical_efficiency", s.statistical_efficiency, {{"off", false}, {"on", true}}));
  OMNI_RETURN_IF_ERROR(r.read_bandwidth("node_bandwidth", s.node_bandwidth_Bps));
  OMNI_RETURN_IF_ERROR(r.read_duration("max_time", s.max_time_s));
  if (s.max_time_s < 0.0) return r.error_got("max_time", "a non-negative duration (0: until every job ends)");
  OMNI_RETURN_IF_ERROR(r.read("packing", s.packing));
  return Status::ok();
}

// Model parameters, device tables, outputs and energy; relative paths resolve against `folder`.
Status parse_tables_and_energy(const YamlSource& source, const MapReader& r, const std::filesystem::path& folder,
                               JobsScenario& s) {
  if (r.has("parameters")) {
    const YAML::Node p = r.get("parameters");
    if (!p.IsMap()) return r.error_got("parameters", "a mapping of model: parameter count");
    for (auto it = p.begin(); it != p.end(); ++it) {
      double n = 0.0;
      OMNI_RETURN_IF_ERROR(
          detail::read_number_node(source, it->second, "parameters." + it->first.Scalar(), n, Range::kPositive));
      s.parameters[it->first.Scalar()] = n;
    }
  }
  auto resolve = [&](std::string& p) {
    if (!p.empty() && !std::filesystem::path(p).is_absolute()) p = (folder / p).lexically_normal().string();
  };
  if (r.has("devices")) {
    auto d = MapReader::open(source, r.get("devices"), "devices", {"kinds", "speeds", "packed_speeds"});
    if (!d) return d.status();
    OMNI_RETURN_IF_ERROR(d->read("kinds", s.device_kinds));
    OMNI_RETURN_IF_ERROR(d->read("speeds", s.device_speeds));
    OMNI_RETURN_IF_ERROR(d->read("packed_speeds", s.packed_speeds));
    resolve(s.device_kinds);
    resolve(s.device_speeds);
    resolve(s.packed_speeds);
  }
  if (r.has("outputs")) {
    auto o = MapReader::open(source, r.get("outputs"), "outputs", {"dir"});
    if (!o) return o.status();
    OMNI_RETURN_IF_ERROR(o->read("dir", s.outputs_dir));
  }
  if (r.has("energy")) {
    const detail::ParseContext ctx{source, folder};
    EnergySpec& e = s.energy.emplace();
    OMNI_RETURN_IF_ERROR(detail::parse_energy(ctx, r.get("energy"), e));
    if (e.cpu.idle_w || e.cpu.has_busy() || e.cpu.off_w) {
      return r.error("energy", "cpu: not in a jobs scenario (its devices are GPUs; give gpu)");
    }
    if (e.slow_with_slack) return r.error("energy", "slow_with_slack: not in a jobs scenario (single-job runs only)");
  }
  return Status::ok();
}

Result<JobsScenario> parse_tree(std::string_view yaml_text, const std::string& source_name,
                                const std::vector<std::string>& overrides) {
  YamlSource source(source_name);
  auto loaded = source.load(yaml_text);
  if (!loaded) return loaded.status();
  YAML::Node root = std::move(loaded).value();
  for (const std::string& o : overrides) OMNI_RETURN_IF_ERROR(source.apply_override(root, o));
  auto reader = MapReader::open(source, root, "",
                                {"kind",
                                 "name",
                                 "seed",
                                 "workload",
                                 "job_policy",
                                 "asp_rule",
                                 "cluster",
                                 "scheduler",
                                 "round",
                                 "checkpoint",
                                 "restore",
                                 "restore_at_first_start",
                                 "placement",
                                 "las_thresholds",
                                 "node_bandwidth",
                                 "max_time",
                                 "packing",
                                 "parameters",
                                 "devices",
                                 "outputs",
                                 "energy",
                                 "las_starvation",
                                 "step_model",
                                 "statistical_efficiency"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  std::string kind;
  OMNI_RETURN_IF_ERROR(r.read("kind", kind));
  if (kind != "jobs") {
    return r.error("kind", "expected `kind: jobs` (a training scenario is run by `omnilearn sim`), got " +
                               (kind.empty() ? std::string("no kind") : "'" + kind + "'"));
  }
  const std::filesystem::path path(source_name);
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  JobsScenario s;
  s.source_path = source_name;
  s.name = path.stem().string();
  OMNI_RETURN_IF_ERROR(r.read("name", s.name));
  if (s.name.empty() || s.name == "." || s.name == ".." || s.name.find('/') != std::string::npos ||
      s.name.size() > limits::kMaxNameBytes) {
    return r.error_got("name", "a folder name of at most " + std::to_string(limits::kMaxNameBytes) + " bytes");
  }
  OMNI_RETURN_IF_ERROR(r.read("seed", s.seed));
  if (!r.has("workload")) return r.error("workload", "missing (a jobs scenario needs a workload)");
  OMNI_RETURN_IF_ERROR(parse_workload(r, folder, s.workload));
  OMNI_RETURN_IF_ERROR(r.read("job_policy", s.job_policy));
  OMNI_RETURN_IF_ERROR(r.read("asp_rule", s.asp_rule));
  if (auto rule = parse_job_asp_rule(s.asp_rule); !rule.is_ok()) {
    return r.error("asp_rule", rule.status().message().substr(std::string_view("asp_rule ").size()));
  }
  OMNI_RETURN_IF_ERROR(r.read("cluster", s.cluster));
  if (is_cluster_file(s.cluster) && !std::filesystem::path(s.cluster).is_absolute()) {
    s.cluster = (folder / s.cluster).lexically_normal().string();
  }
  OMNI_RETURN_IF_ERROR(parse_scheduling(r, s));
  OMNI_RETURN_IF_ERROR(parse_tables_and_energy(source, r, folder, s));
  return s;
}

}  // namespace

Result<JobsScenario> parse_jobs_scenario(std::string_view yaml_text, const std::string& source_name,
                                         const std::vector<std::string>& overrides) {
  return detail::parse_guarded(source_name, [&] { return parse_tree(yaml_text, source_name, overrides); });
}

Result<JobsScenario> load_jobs_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  return parse_jobs_scenario(*text, path, overrides);
}

nlohmann::ordered_json jobs_scenario_json(const JobsScenario& s) {
  nlohmann::ordered_json j;
  j["kind"] = "jobs";
  j["name"] = s.name;
  j["seed"] = s.seed;
  const JobsWorkload& w = s.workload;
  nlohmann::ordered_json wj;
  switch (w.source) {
    case JobsWorkloadSource::kFile:
      wj["file"] = w.file;
      break;
    case JobsWorkloadSource::kGenerate:
      wj["generate"] = {{"jobs", w.jobs}, {"load", w.load}, {"from", w.from}};
      break;
    case JobsWorkloadSource::kImport: {
      nlohmann::ordered_json im = {{"format", w.format},
                                   {"input", w.input},
                                   {"cluster", w.import_cluster},
                                   {"min_duration", w.min_duration_s},
                                   {"max_jobs", w.max_jobs}};
      if (w.clip) im["clip"] = {w.clip->first, w.clip->second};
      wj["import"] = im;
      break;
    }
  }
  if (w.source != JobsWorkloadSource::kFile) {
    wj["batch_policy"] = w.batch_policy;
    wj["mode"] = w.mode;
    wj["reference_device"] = w.reference_device;
  }
  j["workload"] = wj;
  j["job_policy"] = s.job_policy;
  if (!s.asp_rule.empty()) j["asp_rule"] = s.asp_rule;  // written when set: manifests without it stay as they were
  j["cluster"] = s.cluster;
  j["scheduler"] = s.scheduler;
  j["round"] = s.round_s;
  j["checkpoint"] = s.checkpoint_s;
  j["restore"] = s.restore_s;
  j["placement"] = s.placement;
  j["las_thresholds"] = s.las_thresholds;
  // Written when set: manifests without them stay as they were.
  if (s.restore_at_first_start) j["restore_at_first_start"] = "on";
  if (s.las_starvation_s) j["las_starvation"] = *s.las_starvation_s;
  if (s.step_model != "ring") j["step_model"] = s.step_model;
  if (s.statistical_efficiency) j["statistical_efficiency"] = "on";
  j["node_bandwidth"] = s.node_bandwidth_Bps;
  j["max_time"] = s.max_time_s;
  j["packing"] = s.packing;
  j["parameters"] = s.parameters;
  j["devices"] = {{"kinds", s.device_kinds}, {"speeds", s.device_speeds}, {"packed_speeds", s.packed_speeds}};
  j["outputs"] = {{"dir", s.outputs_dir}};
  if (s.energy) {  // only when present: a run without it writes the manifest it wrote before
    const DevicePower& g = s.energy->gpu;
    nlohmann::ordered_json gpu = nlohmann::ordered_json::object();
    if (g.idle_w) gpu["idle"] = *g.idle_w;
    if (g.busy_w) gpu["busy"] = *g.busy_w;
    if (!g.busy_by_batch.empty()) gpu["busy_by_batch"] = g.busy_by_batch;
    if (g.off_w) gpu["off"] = *g.off_w;
    if (!g.source.empty()) gpu["source"] = g.source;
    j["energy"] = {
        {"wait", phase_power_name(s.energy->wait)}, {"comm", phase_power_name(s.energy->comm)}, {"gpu", gpu}};
  }
  return j;
}

const char* scenario_kind_name(ScenarioKind kind) {
  switch (kind) {
    case ScenarioKind::kJobs:
      return "jobs";
    case ScenarioKind::kHybrid:
      return "hybrid";
    case ScenarioKind::kHybridTestbed:
      return "hybrid-testbed";
    case ScenarioKind::kTraining:
      break;
  }
  return "training";
}

Result<ScenarioKind> read_scenario_kind(const std::string& path) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  try {
    YamlSource source(path);
    auto root = source.load(*text);
    if (!root) return root.status();
    if (!root->IsMap() || !(*root)["kind"].IsDefined()) return ScenarioKind::kTraining;
    const YAML::Node kind = (*root)["kind"];
    if (kind.IsScalar() && kind.Scalar() == "jobs") return ScenarioKind::kJobs;
    if (kind.IsScalar() && kind.Scalar() == "training") return ScenarioKind::kTraining;
    if (kind.IsScalar() && kind.Scalar() == "hybrid") return ScenarioKind::kHybrid;
    if (kind.IsScalar() && kind.Scalar() == "hybrid-testbed") return ScenarioKind::kHybridTestbed;
    return source.error(kind, "kind", "expected training, jobs, hybrid or hybrid-testbed, got " + detail::describe(kind));
  } catch (const YAML::Exception& e) {
    return Status::parse_error(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Result<AspSpec> parse_job_asp_rule(std::string_view text) {
  AspSpec spec;
  if (text.empty()) return spec;
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::optional<std::string_view> parameter =
      colon == std::string_view::npos ? std::nullopt : std::optional(text.substr(colon + 1));
  const std::string quoted = "asp_rule '" + std::string(text) + "'";
  const auto rule = enum_from_name<AspRule>(name);
  if (!rule) {
    std::string names;
    for (const EnumName<AspRule>& n : kAspRuleNames) names += (names.empty() ? "" : ", ") + std::string(n.name);
    return Status::invalid_argument(quoted + ": unknown rule; expected one of " + names);
  }
  spec.rule = *rule;
  const auto whole = [&](std::int64_t& out) -> Status {
    const auto v = parameter ? traces::parse_double(*parameter) : std::nullopt;
    if (!v || *v < 0.0 || *v > 1e6 || *v != std::floor(*v)) {
      return Status::invalid_argument(quoted + ": expected " + std::string(name) + ":N with a whole N in [0, 1000000]");
    }
    out = static_cast<std::int64_t>(*v);
    return Status::ok();
  };
  switch (spec.rule) {
    case AspRule::kSsp:
      OMNI_RETURN_IF_ERROR(whole(spec.staleness_bound));
      return spec;
    case AspRule::kRingmaster:
      if (parameter == "inf") {
        spec.delay_threshold = kNoDelayThreshold;
        return spec;
      }
      OMNI_RETURN_IF_ERROR(whole(spec.delay_threshold));
      return spec;
    case AspRule::kStalenessBounded:
      return Status::invalid_argument(quoted + ": staleness-bounded needs its batch policy of the same name, which "
                                               "a job's workers do not run (use it in a single-job scenario)");
    case AspRule::kDcAsgd:
      if (parameter) {
        const auto v = traces::parse_double(*parameter);
        if (!v || !std::isfinite(*v) || *v < 0.0) {
          return Status::invalid_argument(quoted + ": expected dc-asgd or dc-asgd:LAMBDA with a finite LAMBDA >= 0");
        }
        spec.dc_lambda = *v;
      }
      return spec;
    default:
      if (parameter) return Status::invalid_argument(quoted + ": " + std::string(name) + " takes no parameter");
      return spec;
  }
}

}  // namespace omnilearn::scenarios
