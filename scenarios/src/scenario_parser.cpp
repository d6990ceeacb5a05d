#include "omnilearn/scenarios/scenario_parser.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "map_reader.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/text_checks.h"
#include "omnilearn/controller/policy_registry.h"
#include "section_parsers.h"

namespace omnilearn::scenarios {
namespace {

using detail::MapReader;
using detail::ParseContext;
using detail::Range;

// The staleness-bounded policy and rule (docs/asp-rules.md): the policy takes its bound R from the rule, and the
// rule's step already scales by b_k / b_ref, which emulator.lr_scaling would apply a second time.
Status check_staleness_bounded(const MapReader& r, const Scenario& s) {
  const bool rule = s.workload.asp.rule == AspRule::kStalenessBounded;
  if (s.policy.name == "staleness-bounded" && !rule) {
    if (s.mode != controller::TrainingMode::kAsp) return r.error("policy", "staleness-bounded is an ASP policy (mode: asp)");
    return r.error("policy", "staleness-bounded takes its bound from workload.asp: {rule: staleness-bounded, "
                             "delay_threshold: R}");
  }
  if (rule && s.emulator.lr_scaling) {
    return r.error("emulator", "lr_scaling: the staleness-bounded rule already scales each step by b_k / b_ref "
                               "(leave lr_scaling out)");
  }
  return Status::ok();
}

// workload.partition (parsed with the workload) against the mode and the cluster: a split other than iid is ASP's
// (BSP draws every step from one global permutation), and each of the n x shards_per_worker shards holds a sample.
Status check_partition(const detail::YamlSource& source, const YAML::Node& node, const Scenario& s) {
  const PartitionSpec& p = s.workload.partition;
  if (p.kind == PartitionKind::kIid) return Status::ok();
  if (s.mode != controller::TrainingMode::kAsp) {
    return source.error(node, "workload.partition",
                        "only used in asp mode (mode: asp): BSP draws every step from one global permutation");
  }
  const double shards = static_cast<double>(s.worker_count()) * static_cast<double>(p.shards_per_worker);
  if (shards > static_cast<double>(s.workload.dataset_samples)) {
    return source.error(node, "workload.partition",
                        "expected at most dataset_samples (" + std::to_string(s.workload.dataset_samples) +
                            ") shards, got " + std::to_string(s.worker_count()) + " workers x shards_per_worker " +
                            std::to_string(p.shards_per_worker));
  }
  return Status::ok();
}

Status parse_policy(const detail::YamlSource& source, const YAML::Node& node, controller::TrainingMode mode,
                    PolicySpec& out) {
  auto reader = MapReader::open(source, node, "policy",
                                {"name", "min_batch", "max_batch", "dead_band", "ewma_alpha", "decide", "every_n",
                                 "imbalance_threshold", "gain", "fit_window", "memory_guard",
                                 "memory_guard_tolerance"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  OMNI_RETURN_IF_ERROR(r.read("name", out.name));
  const std::vector<std::string> known = controller::make_default_registry().names();
  if (std::find(known.begin(), known.end(), out.name) == known.end()) {
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    return r.error("name", "unknown policy '" + out.name + "' (expected one of: " + list + ")");
  }
  // The OmniLearn law differs by mode: in ASP "omnilearn" means its ASP form; the ASP form cannot run BSP.
  if (mode == controller::TrainingMode::kAsp && out.name == "omnilearn") out.name = "omnilearn-asp";
  if (mode == controller::TrainingMode::kBsp && out.name == "omnilearn-asp") {
    return r.error("name", "'omnilearn-asp' does not conserve the global batch: in bsp mode use 'omnilearn'");
  }
  OMNI_RETURN_IF_ERROR(r.read("min_batch", out.min_batch, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("max_batch", out.max_batch, Range::kPositive));
  if (out.min_batch > out.max_batch) {
    return r.error(r.has("max_batch") ? "max_batch" : "min_batch",
                   "expected min_batch <= max_batch, got " + std::to_string(out.min_batch) + " > " +
                       std::to_string(out.max_batch));
  }
  OMNI_RETURN_IF_ERROR(r.read("dead_band", out.dead_band, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("ewma_alpha", out.ewma_alpha, Range::kOpenUnit));
  OMNI_RETURN_IF_ERROR(r.read_choice("decide", out.trigger,
                                     {{"every-n", controller::DecisionTrigger::kEveryNIterations},
                                      {"every-epoch", controller::DecisionTrigger::kEveryEpoch},
                                      {"imbalance", controller::DecisionTrigger::kImbalance}}));
  OMNI_RETURN_IF_ERROR(r.read("every_n", out.every_n, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("imbalance_threshold", out.imbalance_threshold, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("gain", out.gain, Range::kPositive));
  std::int64_t fit_window = static_cast<std::int64_t>(out.fit_window);
  OMNI_RETURN_IF_ERROR(r.read("fit_window", fit_window, Range::kPositive));
  if (fit_window < 2) return r.error_got("fit_window", "an integer >= 2 (points for a line fit)");
  out.fit_window = static_cast<std::size_t>(fit_window);
  OMNI_RETURN_IF_ERROR(r.read("memory_guard", out.memory_guard));
  OMNI_RETURN_IF_ERROR(r.read("memory_guard_tolerance", out.memory_guard_tolerance, Range::kUnit));
  return Status::ok();
}

Status parse_outputs(const detail::YamlSource& source, const YAML::Node& node, OutputSpec& out) {
  auto reader = MapReader::open(source, node, "outputs", {"dir", "timeline"});
  if (!reader) return reader.status();
  OMNI_RETURN_IF_ERROR(reader->read("dir", out.dir));
  return reader->read("timeline", out.timeline);
}

// The user's model and data (EmulatorSpec documents them).
Status parse_user_model(const MapReader& r, EmulatorSpec& out) {
  OMNI_RETURN_IF_ERROR(r.read("model_file", out.model_file));
  if (r.has("input_shape")) {
    std::vector<double> shape;
    OMNI_RETURN_IF_ERROR(r.read_numbers("input_shape", shape, Range::kPositive));
    if (shape.empty() || shape.size() > 4) return r.error_got("input_shape", "1 to 4 positive dimensions per sample");
    out.input_shape.clear();
    for (const double d : shape) {
      if (d != std::floor(d) || d > 65536) return r.error_got("input_shape", "whole dimensions of at most 65536");
      out.input_shape.push_back(static_cast<std::int64_t>(d));
    }
  }
  OMNI_RETURN_IF_ERROR(r.read_choice("loss", out.loss, enum_names(out.loss)));
  OMNI_RETURN_IF_ERROR(r.read("train_data", out.train_data));
  OMNI_RETURN_IF_ERROR(r.read("test_data", out.test_data));
  if (out.train_data.empty() != out.test_data.empty()) {
    return r.error(out.train_data.empty() ? "train_data" : "test_data", "train_data and test_data go together");
  }
  if (out.network == Network::kTorchScript && out.model_file.empty()) {
    return r.error("network", "torchscript needs emulator.model_file");
  }
  if (!out.model_file.empty() && out.network != Network::kFromModel && out.network != Network::kTorchScript) {
    return r.error("model_file", "a model file is the network: leave emulator.network out (or torchscript)");
  }
  return Status::ok();
}

Status parse_emulator(const detail::YamlSource& source, const YAML::Node& node, EmulatorSpec& out) {
  auto reader = MapReader::open(source, node, "emulator",
                                {"network", "device", "cpu_budget", "cpu_per_core", "cpu_period_s", "throttle", "cpuset",
                                 "sample_cost_s", "target_accuracy", "eval_every", "eval_samples", "time_budget_s",
                                 "learning_rate", "momentum", "lr_scaling", "lr_scaling_rule", "warmup_updates",
                                 "stall_timeout_s", "stop_grace_s", "data_source", "cache_dir", "model_file",
                                 "input_shape", "loss", "train_data", "test_data"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  OMNI_RETURN_IF_ERROR(r.read_choice("network", out.network, enum_names(out.network)));
  OMNI_RETURN_IF_ERROR(r.read_choice("device", out.device, enum_names(out.device)));
  OMNI_RETURN_IF_ERROR(r.read("cpu_budget", out.cpu_budget, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("cpu_per_core", out.cpu_per_core, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("cpu_period_s", out.cpu_period_s, Range::kPositive));
  if (out.cpu_period_s < 0.001 || out.cpu_period_s > 1.0) return r.error_got("cpu_period_s", "a period in [1 ms, 1 s]");
  OMNI_RETURN_IF_ERROR(r.read_choice("throttle", out.throttle, enum_names(out.throttle)));
  OMNI_RETURN_IF_ERROR(r.read("cpuset", out.cpuset));
  OMNI_RETURN_IF_ERROR(r.read("sample_cost_s", out.sample_cost_s, Range::kNonNegative));
  if (out.sample_cost_s > 1.0) return r.error_got("sample_cost_s", "CPU seconds per sample in [0, 1]");
  OMNI_RETURN_IF_ERROR(r.read("target_accuracy", out.target_accuracy, Range::kUnit));
  OMNI_RETURN_IF_ERROR(r.read("eval_every", out.eval_every, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("eval_samples", out.eval_samples, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("time_budget_s", out.time_budget_s, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("learning_rate", out.learning_rate, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("momentum", out.momentum, Range::kUnit));
  OMNI_RETURN_IF_ERROR(r.read("lr_scaling", out.lr_scaling));
  OMNI_RETURN_IF_ERROR(r.read_choice("lr_scaling_rule", out.lr_scaling_rule, enum_names(out.lr_scaling_rule)));
  OMNI_RETURN_IF_ERROR(r.read("warmup_updates", out.warmup_updates, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("stall_timeout_s", out.stall_timeout_s, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("stop_grace_s", out.stop_grace_s, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("data_source", out.data_source));
  OMNI_RETURN_IF_ERROR(r.read("cache_dir", out.cache_dir));
  return parse_user_model(r, out);
}

// Checks that the per-worker bounds can hold the global batch.
Status check_bounds(const MapReader& top, const Scenario& s) {
  const auto n = static_cast<BatchSize>(s.worker_count());
  const BatchSize lo = n * s.policy.min_batch;
  const BatchSize hi = n * s.policy.max_batch;
  const BatchSize b = s.workload.global_batch;
  if (b >= lo && b <= hi) return Status::ok();
  const YAML::Node workload = top.get("workload");
  const YAML::Node at = workload["global_batch"].IsDefined() ? workload["global_batch"] : workload;
  return top.source().error(at, "workload.global_batch",
                            "expected between " + std::to_string(lo) + " and " + std::to_string(hi) + " (" +
                                std::to_string(n) + " workers with policy bounds [" +
                                std::to_string(s.policy.min_batch) + ", " + std::to_string(s.policy.max_batch) +
                                "]), got " + std::to_string(b));
}

}  // namespace

namespace detail {
std::string ParseContext::resolve(const std::string& path) const {
  std::filesystem::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (base_dir / p).lexically_normal().string();
}
}  // namespace detail

namespace {

Result<Scenario> parse_scenario_tree(std::string_view yaml_text, const std::string& source_name,
                                     const std::vector<std::string>& overrides) {
  detail::YamlSource source(source_name);
  auto loaded = source.load(yaml_text);
  if (!loaded) return loaded.status();
  YAML::Node root = std::move(loaded).value();
  for (const std::string& o : overrides) OMNI_RETURN_IF_ERROR(source.apply_override(root, o));

  const std::filesystem::path source_path(source_name);
  ParseContext ctx{source, source_path.has_parent_path() ? source_path.parent_path() : std::filesystem::path(".")};
  auto reader = MapReader::open(source, root, "",
                                {"name", "seed", "mode", "cluster", "workload", "policy", "availability", "outputs",
                                 "emulator", "max_iterations", "energy"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;

  Scenario s;
  s.source_path = source_name;
  s.name = source_path.stem().string();
  OMNI_RETURN_IF_ERROR(r.read("name", s.name));
  if (std::string bad = name_problem(s.name, limits::kMaxNameBytes); !bad.empty()) {
    return r.has("name") ? r.error_got("name", bad + " (it names the run folder)")
                         : Status::invalid_argument(source_name + ": name: the file's name gives the run folder '" +
                                                    s.name + "'; expected " + bad + " (or give `name:`)");
  }
  OMNI_RETURN_IF_ERROR(r.read("seed", s.seed));
  OMNI_RETURN_IF_ERROR(
      r.read_choice("mode", s.mode, {{"bsp", controller::TrainingMode::kBsp}, {"asp", controller::TrainingMode::kAsp}}));
  OMNI_RETURN_IF_ERROR(r.read("max_iterations", s.max_iterations, Range::kNonNegative));
  if (s.max_iterations > limits::kMaxIterations) {
    return r.error_got("max_iterations", "at most " + std::to_string(limits::kMaxIterations));
  }
  for (const char* key : {"cluster", "workload"}) {
    if (!r.has(key)) return r.error(key, "missing (a scenario needs a cluster and a workload)");
  }
  OMNI_RETURN_IF_ERROR(detail::parse_cluster(ctx, r.get("cluster"), s.cluster));
  OMNI_RETURN_IF_ERROR(detail::parse_workload(ctx, r.get("workload"), s.workload));
  if (s.mode == controller::TrainingMode::kBsp && r.get("workload")["asp"].IsDefined()) {
    return source.error(r.get("workload")["asp"], "workload.asp", "only used in asp mode (mode: asp)");
  }
  OMNI_RETURN_IF_ERROR(check_partition(source, r.get("workload")["partition"], s));
  if (r.has("policy")) OMNI_RETURN_IF_ERROR(parse_policy(source, r.get("policy"), s.mode, s.policy));
  if (r.has("availability")) {
    OMNI_RETURN_IF_ERROR(detail::parse_availability(ctx, r.get("availability"), s.cluster, s.availability));
  }
  if (r.has("outputs")) OMNI_RETURN_IF_ERROR(parse_outputs(source, r.get("outputs"), s.outputs));
  if (r.has("emulator")) OMNI_RETURN_IF_ERROR(parse_emulator(source, r.get("emulator"), s.emulator));
  if (r.has("energy")) OMNI_RETURN_IF_ERROR(detail::parse_energy(ctx, r.get("energy"), s.energy.emplace()));
  OMNI_RETURN_IF_ERROR(check_staleness_bounded(r, s));
  OMNI_RETURN_IF_ERROR(check_bounds(r, s));
  if (Status st = s.controller_options().validate(); !st.is_ok()) {
    return Status::invalid_argument(source_name + ": controller options: " + st.message());
  }
  return s;
}

}  // namespace

Result<Scenario> parse_scenario(std::string_view yaml_text, const std::string& source_name,
                                const std::vector<std::string>& overrides) {
  return detail::parse_guarded(source_name, [&] { return parse_scenario_tree(yaml_text, source_name, overrides); });
}

Result<Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  return parse_scenario(*text, path, overrides);
}

}  // namespace omnilearn::scenarios
