#include "omnilearn/scenarios/hybrid_scenario.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "map_reader.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/text_checks.h"
#include "omnilearn/traces/trace_file.h"
#include "yaml_source.h"

namespace omnilearn::scenarios {

namespace {

using detail::MapReader;
using detail::Range;
using detail::YamlSource;

Status parse_kinds(const MapReader& cluster, hybrid::HybridCluster& out, std::map<std::string, std::int64_t>& index) {
  const YAML::Node kinds = cluster.get("kinds");
  if (!kinds.IsSequence() || kinds.size() == 0) return cluster.error_got("kinds", "a list of GPU kinds");
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    auto k = MapReader::open(cluster.source(), kinds[i], cluster.field("kinds") + "[" + std::to_string(i) + "]",
                             {"name", "memory_gb", "gpus_per_node", "nvlink", "peak_tflops", "efficiency"});
    if (!k) return k.status();
    hybrid::DeviceKind kind;
    kind.intra_node_bytes_per_s = 150e9;
    double memory_gb = 0.0, peak_tflops = 0.0;
    OMNI_RETURN_IF_ERROR(k->read("name", kind.name));
    const bool plain = !kind.name.empty() && kind.name.size() <= 64 &&
                       std::all_of(kind.name.begin(), kind.name.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '+';
                       });
    if (!plain) return k->error_got("name", "a kind's name of 1 to 64 letters, digits, '-', '_', '.' or '+'");
    if (!k->has("memory_gb")) return k->error("memory_gb", "expected one GPU's memory in GB");
    OMNI_RETURN_IF_ERROR(k->read("memory_gb", memory_gb, Range::kPositive));
    OMNI_RETURN_IF_ERROR(k->read("gpus_per_node", kind.gpus_per_node, Range::kPositive));
    OMNI_RETURN_IF_ERROR(k->read_bandwidth("nvlink", kind.intra_node_bytes_per_s));
    OMNI_RETURN_IF_ERROR(k->read("peak_tflops", peak_tflops, Range::kNonNegative));
    OMNI_RETURN_IF_ERROR(k->read("efficiency", kind.efficiency, Range::kOpenUnit));
    kind.memory_bytes = memory_gb * 1e9;
    kind.peak_flops = peak_tflops * 1e12;
    if (index.contains(kind.name)) return k->error("name", "kind '" + kind.name + "' is listed twice");
    index[kind.name] = static_cast<std::int64_t>(out.kinds.size());
    out.kinds.push_back(kind);
  }
  return Status::ok();
}

Status parse_cluster(const MapReader& root, hybrid::HybridCluster& out) {
  if (!root.has("cluster")) return root.error("cluster", "expected the cluster: kinds, nodes and network");
  auto cluster = MapReader::open(root.source(), root.get("cluster"), "cluster", {"kinds", "nodes", "network"});
  if (!cluster) return cluster.status();
  std::map<std::string, std::int64_t> index;
  OMNI_RETURN_IF_ERROR(parse_kinds(*cluster, out, index));
  const YAML::Node nodes = cluster->get("nodes");
  if (!nodes.IsSequence() || nodes.size() == 0) return cluster->error_got("nodes", "a list of {kind, count}");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto n = MapReader::open(root.source(), nodes[i], "cluster.nodes[" + std::to_string(i) + "]", {"kind", "count", "gpus"});
    if (!n) return n.status();
    std::string kind;
    std::int64_t count = 1, gpus = 0;
    OMNI_RETURN_IF_ERROR(n->read("kind", kind));
    const auto it = index.find(kind);
    if (it == index.end()) return n->error("kind", "kind '" + kind + "' is not in cluster.kinds");
    OMNI_RETURN_IF_ERROR(n->read("count", count, Range::kPositive));
    gpus = out.kinds[static_cast<std::size_t>(it->second)].gpus_per_node;
    OMNI_RETURN_IF_ERROR(n->read("gpus", gpus, Range::kPositive));
    if (out.devices.size() + static_cast<std::size_t>(count * gpus) > 1u << 20) {
      return n->error("count", "the cluster would hold more than 1,048,576 GPUs");
    }
    for (std::int64_t c = 0; c < count; ++c) {
      for (std::int64_t g = 0; g < gpus; ++g) out.devices.push_back({it->second, out.nodes});
      ++out.nodes;
    }
  }
  if (cluster->has("network")) {
    auto net = MapReader::open(root.source(), cluster->get("network"), "cluster.network", {"inter_node", "latency"});
    if (!net) return net.status();
    OMNI_RETURN_IF_ERROR(net->read_bandwidth("inter_node", out.network.inter_node_bytes_per_s));
    OMNI_RETURN_IF_ERROR(net->read_duration("latency", out.network.latency_s));
  }
  return Status::ok();
}

Status parse_model(const MapReader& root, HybridScenario& s) {
  if (!root.has("model")) return root.error("model", "expected model: {profile: NAME} or model: {transformer: {...}}");
  auto model = MapReader::open(root.source(), root.get("model"), "model", {"profile", "transformer"});
  if (!model) return model.status();
  OMNI_RETURN_IF_ERROR(model->require_one_of({"profile", "transformer"}));
  OMNI_RETURN_IF_ERROR(model->read("profile", s.profile));
  if (model->has("transformer")) {
    auto t = MapReader::open(root.source(), model->get("transformer"), "model.transformer", {"hidden", "layers", "seq", "vocab"});
    if (!t) return t.status();
    for (const char* key : {"hidden", "layers", "seq", "vocab"}) {
      if (!t->has(key)) return t->error(key, "expected a positive integer");
    }
    OMNI_RETURN_IF_ERROR(t->read("hidden", s.transformer.hidden, Range::kPositive));
    OMNI_RETURN_IF_ERROR(t->read("layers", s.transformer.layers, Range::kPositive));
    OMNI_RETURN_IF_ERROR(t->read("seq", s.transformer.seq, Range::kPositive));
    OMNI_RETURN_IF_ERROR(t->read("vocab", s.transformer.vocab, Range::kPositive));
    s.has_transformer = true;
  }
  return Status::ok();
}

Status parse_job(const MapReader& root, hybrid::HybridRunSpec& spec) {
  if (!root.has("job")) return root.error("job", "expected the job: shape, micro_batch, global_batch, schedule");
  auto job = MapReader::open(root.source(), root.get("job"), "job",
                             {"shape", "micro_batch", "global_batch", "schedule", "chunks", "layers_per_stage"});
  if (!job) return job.status();
  if (!job->has("shape")) return job->error("shape", "expected {dp, pp, tp}");
  auto shape = MapReader::open(root.source(), job->get("shape"), "job.shape", {"dp", "pp", "tp"});
  if (!shape) return shape.status();
  OMNI_RETURN_IF_ERROR(shape->read("dp", spec.shape.dp, Range::kPositive));
  OMNI_RETURN_IF_ERROR(shape->read("pp", spec.shape.pp, Range::kPositive));
  OMNI_RETURN_IF_ERROR(shape->read("tp", spec.shape.tp, Range::kPositive));
  if (!job->has("global_batch")) return job->error("global_batch", "expected the global batch in samples");
  OMNI_RETURN_IF_ERROR(job->read("micro_batch", spec.micro_batch, Range::kPositive));
  OMNI_RETURN_IF_ERROR(job->read("global_batch", spec.global_batch, Range::kPositive));
  OMNI_RETURN_IF_ERROR(job->read_choice("schedule", spec.schedule.kind,
                                        {{"gpipe", hybrid::ScheduleKind::kGPipe},
                                         {"1f1b", hybrid::ScheduleKind::kOneFOneB},
                                         {"interleaved", hybrid::ScheduleKind::kInterleaved}}));
  spec.schedule.chunks = spec.schedule.kind == hybrid::ScheduleKind::kInterleaved ? 2 : 1;
  OMNI_RETURN_IF_ERROR(job->read("chunks", spec.schedule.chunks, Range::kPositive));
  if (spec.global_batch % spec.micro_batch != 0) {
    return job->error("global_batch", "expected a multiple of micro_batch (" + std::to_string(spec.micro_batch) + ")");
  }
  if (job->has("layers_per_stage")) {
    std::vector<double> layers;
    OMNI_RETURN_IF_ERROR(job->read_numbers("layers_per_stage", layers, Range::kPositive));
    for (double l : layers) spec.layers_per_stage.push_back(static_cast<std::int64_t>(l));
  }
  return Status::ok();
}

Status parse_control(const MapReader& root, HybridScenario& s) {
  s.policies = {hybrid::HybridPolicy::kOmnilearn};
  if (!root.has("control")) return Status::ok();
  auto c = MapReader::open(root.source(), root.get("control"), "control",
                           {"policy", "policies", "batch_policy", "every_n", "dead_band", "layer_every_n",
                            "imbalance_threshold", "horizon_steps", "restart", "checkpoint_bandwidth"});
  if (!c) return c.status();
  OMNI_RETURN_IF_ERROR(c->require_one_of({"policy", "policies"}, /*at_most_one=*/true));
  std::string one;
  OMNI_RETURN_IF_ERROR(c->read("policy", one));
  std::vector<std::string> names;
  if (!one.empty()) names.push_back(one);
  OMNI_RETURN_IF_ERROR(c->read_strings("policies", names));
  if (!names.empty()) {
    s.policies.clear();
    for (const std::string& n : names) {
      auto p = hybrid::parse_hybrid_policy(n);
      if (!p) return c->error(c->has("policy") ? "policy" : "policies", p.status().message());
      s.policies.push_back(*p);
    }
  }
  hybrid::HybridControl& k = s.spec.control;
  OMNI_RETURN_IF_ERROR(c->read("batch_policy", k.batch_policy));
  OMNI_RETURN_IF_ERROR(c->read("every_n", k.every_n, Range::kPositive));
  OMNI_RETURN_IF_ERROR(c->read("dead_band", k.dead_band, Range::kUnit));
  OMNI_RETURN_IF_ERROR(c->read("layer_every_n", k.layer_every_n, Range::kPositive));
  OMNI_RETURN_IF_ERROR(c->read("imbalance_threshold", k.imbalance_threshold, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(c->read("horizon_steps", k.horizon_steps, Range::kPositive));
  OMNI_RETURN_IF_ERROR(c->read_duration("restart", k.restart_s));
  OMNI_RETURN_IF_ERROR(c->read_bandwidth("checkpoint_bandwidth", k.checkpoint_bytes_per_s));
  return Status::ok();
}

Status parse_availability(const MapReader& root, HybridScenario& s) {
  if (!root.has("availability")) return Status::ok();
  auto a = MapReader::open(root.source(), root.get("availability"), "availability", {"episodes", "trace", "trace_devices"});
  if (!a) return a.status();
  if (a->has("episodes")) {
    const YAML::Node list = a->get("episodes");
    if (!list.IsSequence()) return a->error_got("episodes", "a list of {device|node, from, to, speed|link}");
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto e = MapReader::open(root.source(), list[i], "availability.episodes[" + std::to_string(i) + "]",
                               {"device", "node", "from", "to", "speed", "link"});
      if (!e) return e.status();
      OMNI_RETURN_IF_ERROR(e->require_one_of({"device", "node"}));
      hybrid::SpeedEpisode ep;
      if (e->has("node")) {
        ep.target = hybrid::SpeedEpisode::Target::kNodeLink;
        OMNI_RETURN_IF_ERROR(e->read("node", ep.index, Range::kNonNegative));
        if (!e->has("link")) return e->error("link", "expected the link's factor in [0, 1] for a node episode");
        OMNI_RETURN_IF_ERROR(e->read("link", ep.factor, Range::kOpenUnit));
        if (ep.index >= s.spec.cluster.nodes) return e->error("node", "no such node; the cluster has " + std::to_string(s.spec.cluster.nodes));
      } else {
        OMNI_RETURN_IF_ERROR(e->read("device", ep.index, Range::kNonNegative));
        if (!e->has("speed")) return e->error("speed", "expected the device's speed in [0, 1] (0: down)");
        OMNI_RETURN_IF_ERROR(e->read("speed", ep.factor, Range::kUnit));
        if (ep.index >= static_cast<std::int64_t>(s.spec.cluster.devices.size())) {
          return e->error("device", "no such device; the cluster has " + std::to_string(s.spec.cluster.devices.size()));
        }
      }
      if (!e->has("from") || !e->has("to")) return e->error("to", "expected from and to (durations, e.g. 120s)");
      OMNI_RETURN_IF_ERROR(e->read_duration("from", ep.from_s));
      OMNI_RETURN_IF_ERROR(e->read_duration("to", ep.to_s));
      if (!(ep.to_s > ep.from_s)) return e->error("to", "expected to > from");
      s.spec.episodes.push_back(ep);
    }
  }
  if (a->has("trace")) {
    std::string path;
    OMNI_RETURN_IF_ERROR(a->read("trace", path));
    const std::filesystem::path resolved =
        std::filesystem::path(path).is_absolute() ? std::filesystem::path(path)
                                                  : std::filesystem::path(s.source_path).parent_path() / path;
    auto trace = traces::read_trace_file(resolved.string());
    if (!trace) return a->error("trace", trace.status().message());
    s.spec.trace = std::move(trace).value();
    std::vector<double> devices;
    OMNI_RETURN_IF_ERROR(a->read_numbers("trace_devices", devices, Range::kNonNegative));
    for (double d : devices) {
      if (d >= static_cast<double>(s.spec.cluster.devices.size())) return a->error("trace_devices", "names a device the cluster lacks");
      s.spec.trace_devices.push_back(static_cast<std::int64_t>(d));
    }
    if (!devices.empty() && devices.size() != s.spec.trace->worker_count()) {
      return a->error("trace_devices", "expected one device per trace worker (" + std::to_string(s.spec.trace->worker_count()) + ")");
    }
  }
  return Status::ok();
}

Result<HybridScenario> parse_tree(std::string_view yaml_text, const std::string& source_name,
                                  const std::vector<std::string>& overrides) {
  YamlSource source(source_name);
  auto loaded = source.load(yaml_text);
  if (!loaded) return loaded.status();
  YAML::Node root = std::move(loaded).value();
  for (const std::string& o : overrides) OMNI_RETURN_IF_ERROR(source.apply_override(root, o));
  auto reader = MapReader::open(source, root, "",
                                {"kind", "name", "seed", "model", "cluster", "job", "control", "availability", "steps",
                                 "timeline_steps", "state_bytes_per_param", "grad_bytes_per_param"});
  if (!reader) return reader.status();
  HybridScenario s;
  s.source_path = source_name;
  s.text = std::string(yaml_text);
  s.name = std::filesystem::path(source_name).stem().string();
  std::string kind;
  OMNI_RETURN_IF_ERROR(reader->read("kind", kind));
  if (kind != "hybrid") return reader->error("kind", "expected hybrid");
  OMNI_RETURN_IF_ERROR(reader->read("name", s.name));
  // The default run folder is runs/<name>: a name must name one folder.
  if (std::string bad = name_problem(s.name, limits::kMaxNameBytes); !bad.empty()) return reader->error_got("name", bad);
  OMNI_RETURN_IF_ERROR(reader->read("seed", s.seed));
  OMNI_RETURN_IF_ERROR(parse_model(*reader, s));
  OMNI_RETURN_IF_ERROR(parse_cluster(*reader, s.spec.cluster));
  OMNI_RETURN_IF_ERROR(parse_job(*reader, s.spec));
  OMNI_RETURN_IF_ERROR(parse_control(*reader, s));
  OMNI_RETURN_IF_ERROR(parse_availability(*reader, s));
  OMNI_RETURN_IF_ERROR(reader->read("steps", s.spec.steps, Range::kPositive));
  OMNI_RETURN_IF_ERROR(reader->read("timeline_steps", s.spec.timeline_steps, Range::kNonNegative));
  OMNI_RETURN_IF_ERROR(reader->read("state_bytes_per_param", s.spec.memory.state_bytes_per_param, Range::kPositive));
  OMNI_RETURN_IF_ERROR(reader->read("grad_bytes_per_param", s.spec.step.grad_bytes_per_param, Range::kPositive));
  if (s.spec.steps > 10'000'000) return reader->error("steps", "expected at most 10,000,000 steps");
  return s;
}

}  // namespace

Result<HybridScenario> parse_hybrid_scenario(std::string_view yaml_text, const std::string& source_name,
                                             const std::vector<std::string>& overrides) {
  return detail::parse_guarded(source_name, [&] { return parse_tree(yaml_text, source_name, overrides); });
}

Result<HybridScenario> load_hybrid_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  return parse_hybrid_scenario(*text, path, overrides);
}

}  // namespace omnilearn::scenarios
