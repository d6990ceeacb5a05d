#include <cmath>
#include <filesystem>

#include "map_reader.h"
#include "omnilearn/base/format.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/scenarios/model_catalog.h"
#include "omnilearn/scenarios/model_profile_file.h"
#include "section_parsers.h"

namespace omnilearn::scenarios::detail {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml") || s.ends_with(".json");
}

// A table `key: {share: [...], <value.name>: [...]}` of as many values as strictly ascending shares (at least one),
// the shares in `share_range` and the values in value.range.
struct TableValues {
  const char* name;
  Range range;
};
Status read_share_table(const YamlSource& source, const MapReader& r, const char* key, TableValues value,
                        Range share_range, std::vector<double>& shares, std::vector<double>& values) {
  auto table = MapReader::open(source, r.get(key), r.field(key), {"share", value.name});
  if (!table) return table.status();
  for (const char* column : {"share", value.name}) {
    if (!table->has(column)) return table->error(column, "missing (expected a list of numbers)");
  }
  OMNI_RETURN_IF_ERROR(table->read_numbers("share", shares, share_range));
  OMNI_RETURN_IF_ERROR(table->read_numbers(value.name, values, value.range));
  if (shares.size() != values.size() || shares.empty()) {
    return table->error(value.name, "expected as many values as `share` (at least one)");
  }
  for (std::size_t i = 1; i < shares.size(); ++i) {
    if (!(shares[i] > shares[i - 1])) return table->error("share", "expected strictly ascending shares");
  }
  return Status::ok();
}

// The CPU-testbed terms of a profile (ModelProfile documents them): host_core_flops, cpu_slowdown: {share: [...],
// slowdown: [...]}, allreduce_fixed_s, quota_period_s, quota_holds_comm, compute_jitter_cv, compute_jitter_shared,
// compute_noise: {share: [...], std_s: [...]}, host_cpu_available.
Status parse_testbed_terms(const YamlSource& source, const MapReader& r, ModelProfile& out) {
  if (r.has("host_core_flops")) {
    if (!r.has("measured_fixed_s")) {
      return r.error("host_core_flops", "needs the measured law (measured_fixed_s, measured_per_sample_s)");
    }
    double flops = 0.0;
    OMNI_RETURN_IF_ERROR(r.read("host_core_flops", flops, Range::kPositive));
    out.host_core_flops = flops;
  }
  if (r.has("cpu_slowdown")) {
    OMNI_RETURN_IF_ERROR(read_share_table(source, r, "cpu_slowdown", {"slowdown", Range::kPositive},
                                          Range::kOpenUnit, out.slowdown_shares, out.slowdown_factors));
  }
  OMNI_RETURN_IF_ERROR(r.read("allreduce_fixed_s", out.allreduce_fixed_s, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("quota_period_s", out.quota_period_s, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("quota_holds_comm", out.quota_holds_comm));
  OMNI_RETURN_IF_ERROR(r.read("compute_jitter_cv", out.compute_jitter_cv, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(r.read("compute_jitter_shared", out.compute_jitter_shared, Range::kUnit));
  if (r.has("compute_noise")) {
    if (!r.has("host_core_flops")) return r.error("compute_noise", "needs host_core_flops (the workers' CPU shares)");
    OMNI_RETURN_IF_ERROR(read_share_table(source, r, "compute_noise", {"std_s", Range::kNonNegative},
                                          Range::kPositive, out.noise_shares, out.noise_std_s));
  }
  if (r.has("host_cpu_available")) {
    if (!r.has("host_core_flops")) return r.error("host_cpu_available", "needs host_core_flops");
    double cores = 0.0;
    OMNI_RETURN_IF_ERROR(r.read("host_cpu_available", cores, Range::kPositive));
    out.host_cpu_available = cores;
  }
  return Status::ok();
}

}  // namespace

Status parse_model_profile(const YamlSource& source, const YAML::Node& node, const std::string& path,
                           ModelProfile& out) {
  auto reader = MapReader::open(source, node, path,
                                {"name", "parameters", "flops_per_sample", "flops_per_iteration", "gradient_bytes",
                                 "measured_fixed_s", "measured_per_sample_s", "host_core_flops", "cpu_slowdown",
                                 "allreduce_fixed_s", "quota_period_s", "quota_holds_comm", "compute_jitter_cv",
                                 "compute_jitter_shared", "host_cpu_available", "compute_noise", "backward_fraction"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  for (const char* key : {"parameters", "flops_per_sample"}) {
    if (!r.has(key)) return r.error(key, "missing (expected a positive number)");
  }
  OMNI_RETURN_IF_ERROR(r.read("name", out.name));
  OMNI_RETURN_IF_ERROR(r.read("parameters", out.parameters, Range::kPositive));
  out.gradient_bytes = 4.0 * out.parameters;
  OMNI_RETURN_IF_ERROR(r.read("gradient_bytes", out.gradient_bytes, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("flops_per_sample", out.flops_per_sample, Range::kPositive));
  out.flops_per_iteration = 0.0;
  OMNI_RETURN_IF_ERROR(r.read("flops_per_iteration", out.flops_per_iteration, Range::kNonNegative));
  if (r.has("measured_fixed_s") != r.has("measured_per_sample_s")) {
    return r.error(r.has("measured_fixed_s") ? "measured_per_sample_s" : "measured_fixed_s",
                   "missing (measured_fixed_s and measured_per_sample_s go together)");
  }
  if (r.has("measured_fixed_s")) {
    double fixed = 0.0;
    double per_sample = 0.0;
    OMNI_RETURN_IF_ERROR(r.read("measured_fixed_s", fixed, Range::kNonNegative));
    OMNI_RETURN_IF_ERROR(r.read("measured_per_sample_s", per_sample, Range::kPositive));
    out.measured_fixed_s = fixed;
    out.measured_per_sample_s = per_sample;
  }
  OMNI_RETURN_IF_ERROR(r.read("backward_fraction", out.backward_fraction, Range::kUnit));
  return parse_testbed_terms(source, r, out);
}

namespace {

// `allreduce: ring` or `allreduce: {algorithm: ..., chunks, shards, workers_per_node}`, and the workload's `buckets` /
// `bucket_bytes` (at most one).
Status parse_allreduce(const ParseContext& ctx, const MapReader& workload, AllreduceSpec& out) {
  using A = AllreduceAlgorithm;
  const std::initializer_list<std::pair<std::string_view, A>> names{{"ring", A::kRing},
                                                                    {"hierarchical-ring", A::kHierarchicalRing},
                                                                    {"double-binary-tree", A::kDoubleBinaryTree},
                                                                    {"halving-doubling", A::kHalvingDoubling},
                                                                    {"parameter-server", A::kParameterServer}};
  if (workload.has("allreduce")) {
    const YAML::Node node = workload.get("allreduce");
    if (node.IsMap()) {
      auto reader = MapReader::open(ctx.source, node, "workload.allreduce",
                                    {"algorithm", "chunks", "shards", "workers_per_node"});
      if (!reader) return reader.status();
      const MapReader& r = *reader;
      if (!r.has("algorithm")) return r.error("algorithm", "missing (expected ring, hierarchical-ring, "
                                                           "double-binary-tree, halving-doubling or parameter-server)");
      OMNI_RETURN_IF_ERROR(r.read_choice("algorithm", out.algorithm, names));
      OMNI_RETURN_IF_ERROR(r.read("chunks", out.chunks, Range::kPositive));
      OMNI_RETURN_IF_ERROR(r.read("shards", out.shards, Range::kPositive));
      OMNI_RETURN_IF_ERROR(r.read("workers_per_node", out.workers_per_node, Range::kPositive));
      if (r.has("chunks") && out.algorithm != A::kDoubleBinaryTree) {
        return r.error("chunks", "only double-binary-tree pipelines chunks (the rings' flows carry the whole share)");
      }
      if (r.has("shards") && out.algorithm != A::kParameterServer) {
        return r.error("shards", "only used by parameter-server");
      }
      if (r.has("workers_per_node") && out.algorithm != A::kHierarchicalRing) {
        return r.error("workers_per_node", "only used by hierarchical-ring");
      }
      if (out.chunks > 1024) return r.error_got("chunks", "at most 1024");
      if (out.algorithm == A::kHierarchicalRing && !r.has("workers_per_node")) {
        return r.error("workers_per_node", "missing (hierarchical-ring groups workers into nodes of this many)");
      }
    } else {
      OMNI_RETURN_IF_ERROR(workload.read_choice("allreduce", out.algorithm, names));
      if (out.algorithm == A::kHierarchicalRing) {
        return workload.error("allreduce", "hierarchical-ring needs workers_per_node: write "
                                           "allreduce: {algorithm: hierarchical-ring, workers_per_node: N}");
      }
    }
  }
  OMNI_RETURN_IF_ERROR(workload.require_one_of({"buckets", "bucket_bytes"}, /*at_most_one=*/true));
  OMNI_RETURN_IF_ERROR(workload.read("buckets", out.buckets, Range::kPositive));
  OMNI_RETURN_IF_ERROR(workload.read("bucket_bytes", out.bucket_bytes, Range::kPositive));
  if (out.buckets > 100000) return workload.error_got("buckets", "at most 100000");
  return Status::ok();
}

// `asp: {update, pull, epochs, rule, staleness_bound, delay_threshold, dc_lambda}` (AspSpec documents each); a rule's
// parameter only with its rule, and only gradients go through a rule.
Status parse_asp(const ParseContext& ctx, const YAML::Node& node, AspSpec& out) {
  auto reader = MapReader::open(ctx.source, node, "workload.asp",
                                {"update", "pull", "epochs", "rule", "staleness_bound", "delay_threshold", "dc_lambda"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  OMNI_RETURN_IF_ERROR(r.read_choice("update", out.update, enum_names(out.update)));
  OMNI_RETURN_IF_ERROR(r.read_choice("pull", out.pull, enum_names(out.pull)));
  OMNI_RETURN_IF_ERROR(r.read_choice("epochs", out.epochs, enum_names(out.epochs)));
  if (r.has("epochs") && out.pull != AspPull::kPerEpoch) {
    return r.error("epochs", "counts the epochs of pull: per-epoch's barrier (set pull: per-epoch, or leave it out)");
  }
  OMNI_RETURN_IF_ERROR(r.read_choice("rule", out.rule, enum_names(out.rule)));
  if (out.update == AspUpdate::kModelOverwrite && out.rule != AspRule::kAsgd) {
    return r.error("rule", "a rule applies pushed gradients: with update: model-overwrite the pushed model replaces "
                           "the server's (leave rule out, or use update: gradient)");
  }
  struct Parameter {
    const char* key;
    AspRule rule;
    const char* what;
  };
  for (const Parameter& p : {Parameter{"staleness_bound", AspRule::kSsp, "ssp's bound s"},
                             Parameter{"delay_threshold", AspRule::kRingmaster,
                                       "ringmaster's delay threshold R and staleness-bounded's bound R"},
                             Parameter{"dc_lambda", AspRule::kDcAsgd, "dc-asgd's lambda"}}) {
    const bool bounded_r = out.rule == AspRule::kStalenessBounded && p.rule == AspRule::kRingmaster;
    if (r.has(p.key) && out.rule != p.rule && !bounded_r) return r.error(p.key, std::string("only used by ") + p.what);
  }
  if (out.rule == AspRule::kStalenessBounded) {
    if (!r.has("delay_threshold")) {
      return r.error("rule", "staleness-bounded needs delay_threshold (R >= 1: the staleness its batches are sized "
                             "to arrive within and beyond which its step shrinks as R / staleness)");
    }
    OMNI_RETURN_IF_ERROR(r.read("delay_threshold", out.delay_threshold, Range::kPositive));
    if (out.delay_threshold > 1000000) return r.error_got("delay_threshold", "a whole R in [1, 1000000]");
  }
  if (out.rule == AspRule::kSsp && !r.has("staleness_bound")) {
    return r.error("rule", "ssp needs staleness_bound (s >= 0: a worker may run s iterations ahead of the slowest)");
  }
  if (out.rule == AspRule::kRingmaster && !r.has("delay_threshold")) {
    return r.error("rule", "ringmaster needs delay_threshold (R >= 0: a gradient more than R updates stale is "
                           "dropped; .inf drops none)");
  }
  OMNI_RETURN_IF_ERROR(r.read("staleness_bound", out.staleness_bound, Range::kNonNegative));
  if (out.staleness_bound > 1000000) return r.error_got("staleness_bound", "at most 1000000");
  const YAML::Node threshold = r.has("delay_threshold") ? r.get("delay_threshold") : YAML::Node();
  if (out.rule == AspRule::kStalenessBounded) {  // its R was read above: whole, >= 1, no inf
  } else if (threshold.IsScalar() && (threshold.Scalar() == "inf" || threshold.Scalar() == ".inf")) {
    out.delay_threshold = kNoDelayThreshold;
  } else {
    OMNI_RETURN_IF_ERROR(r.read("delay_threshold", out.delay_threshold, Range::kNonNegative));
  }
  OMNI_RETURN_IF_ERROR(r.read("dc_lambda", out.dc_lambda, Range::kNonNegative));
  if (!std::isfinite(out.dc_lambda)) return r.error_got("dc_lambda", "a finite number >= 0");
  return Status::ok();
}

// `partition: iid | sorted-shards`, or a mapping {kind, shards_per_worker}.
Status parse_partition(const ParseContext& ctx, const MapReader& workload, PartitionSpec& out) {
  if (workload.get("partition").IsScalar()) return workload.read_choice("partition", out.kind, enum_names(out.kind));
  auto reader =
      MapReader::open(ctx.source, workload.get("partition"), "workload.partition", {"kind", "shards_per_worker"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  if (!r.has("kind")) return r.error("kind", "missing (expected iid | sorted-shards)");
  OMNI_RETURN_IF_ERROR(r.read_choice("kind", out.kind, enum_names(out.kind)));
  if (r.has("shards_per_worker") && out.kind != PartitionKind::kSortedShards) {
    return r.error("shards_per_worker", "only used by kind: sorted-shards");
  }
  OMNI_RETURN_IF_ERROR(r.read("shards_per_worker", out.shards_per_worker, Range::kPositive));
  return Status::ok();
}

}  // namespace

Status parse_workload(const ParseContext& ctx, const YAML::Node& node, WorkloadSpec& out) {
  auto reader = MapReader::open(ctx.source, node, "workload",
                                {"model", "dataset", "dataset_samples", "global_batch", "epochs", "sample_budget",
                                 "allreduce", "buckets", "bucket_bytes", "numerics", "asp", "partition"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  OMNI_RETURN_IF_ERROR(r.read_choice("numerics", out.numerics, {{"time", Numerics::kTime}, {"real", Numerics::kReal}}));

  OMNI_RETURN_IF_ERROR(r.read("dataset", out.dataset));
  const auto dataset = find_dataset(out.dataset);
  if (dataset) {
    out.dataset_samples = dataset->samples;
  } else if (!r.has("dataset_samples")) {
    return r.error("dataset", "unknown dataset '" + out.dataset + "' (expected one of: " + join(dataset_names()) +
                                  "; or give dataset_samples)");
  }
  OMNI_RETURN_IF_ERROR(r.read("dataset_samples", out.dataset_samples, Range::kPositive));
  const bool small_images = dataset ? dataset->small_images : false;

  if (!r.has("model")) return r.error("model", "missing (expected a model name or a profile file)");
  const YAML::Node model = r.get("model");
  if (model.IsMap()) {
    out.model = ModelProfile{};
    out.model.name = "custom";
    OMNI_RETURN_IF_ERROR(parse_model_profile(ctx.source, model, "workload.model", out.model));
  } else if (model.IsScalar()) {
    const std::string name = model.Scalar();
    if (auto builtin = find_model(name, small_images)) {
      out.model = *builtin;
    } else if (looks_like_path(name)) {
      const std::string path = ctx.resolve(name);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) {
        return r.error("model", "model profile file '" + path + "' not found");
      }
      auto profile = load_model_profile(path);
      if (!profile) return profile.status().with_context(r.field("model"));
      out.model = std::move(profile).value();
    } else {
      return r.error("model", "unknown model '" + name + "' (expected one of: " + join(model_names()) +
                                  "; or a path to a profile .yaml/.json file)");
    }
  } else {
    return r.error_got("model", "a model name, a profile file or a profile mapping");
  }

  OMNI_RETURN_IF_ERROR(parse_allreduce(ctx, r, out.allreduce));
  if (r.has("asp")) OMNI_RETURN_IF_ERROR(parse_asp(ctx, r.get("asp"), out.asp));
  if (r.has("partition")) OMNI_RETURN_IF_ERROR(parse_partition(ctx, r, out.partition));
  if (out.allreduce.bucket_bytes > 0.0 && out.model.gradient_bytes / out.allreduce.bucket_bytes > 100000.0) {
    return r.error_got("bucket_bytes", "at most 100000 buckets of the model's gradient");
  }
  OMNI_RETURN_IF_ERROR(r.read("global_batch", out.global_batch, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.require_one_of({"epochs", "sample_budget"}, /*at_most_one=*/true));
  OMNI_RETURN_IF_ERROR(r.read("epochs", out.epochs, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("sample_budget", out.sample_budget, Range::kPositive));
  if (out.sample_budget > 0) {
    // The epochs the budget reaches into (the last one may be partial).
    out.epochs = (out.sample_budget + out.dataset_samples - 1) / out.dataset_samples;
  }
  // Iterations asked for, in doubles: the integers' product can overflow.
  const double steps_per_epoch = std::ceil(static_cast<double>(out.dataset_samples) / out.global_batch);
  const double iterations = out.sample_budget > 0 ? static_cast<double>(out.sample_budget) / out.global_batch
                                                  : static_cast<double>(out.epochs) * steps_per_epoch;
  if (iterations > static_cast<double>(limits::kMaxIterations)) {
    return r.error(out.sample_budget > 0 ? "sample_budget" : "epochs",
                   "expected at most " + std::to_string(limits::kMaxIterations) +
                       " iterations (epochs x dataset_samples / global_batch), got " + format_g(iterations, 6));
  }
  return Status::ok();
}

}  // namespace omnilearn::scenarios::detail
