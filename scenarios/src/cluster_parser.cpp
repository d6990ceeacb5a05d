#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "map_reader.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/text_checks.h"
#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/scenarios/network_spec.h"
#include "platform_hosts.h"
#include "section_parsers.h"

namespace omnilearn::scenarios::detail {
namespace {

// Overlays the keys present in `node` on `out`. `speed_required`: one of speed / core_speed must be given.
Status parse_node(const ParseContext& ctx, const YAML::Node& node, const std::string& path, bool allow_count,
                  bool speed_required, NodeSpec& out, std::int64_t& count) {
  auto reader = allow_count
                    ? MapReader::open(ctx.source, node, path,
                                      {"name", "count", "cores", "core_speed", "speed", "gpu", "bandwidth", "latency"})
                    : MapReader::open(ctx.source, node, path,
                                      {"name", "cores", "core_speed", "speed", "gpu", "bandwidth", "latency"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  OMNI_RETURN_IF_ERROR(r.require_one_of({"speed", "core_speed"}, /*at_most_one=*/!speed_required));
  OMNI_RETURN_IF_ERROR(r.read("name", out.name));
  // A worker's name becomes a host, file and cgroup name; `count` appends digits to it.
  if (r.has("name")) {
    if (std::string bad = name_problem(out.name, limits::kMaxNameBytes); !bad.empty()) return r.error_got("name", bad);
  }
  if (allow_count) OMNI_RETURN_IF_ERROR(r.read("count", count, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("cores", out.cores, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read("speed", out.speed_flops, Range::kPositive));
  double core_speed = 0.0;
  OMNI_RETURN_IF_ERROR(r.read("core_speed", core_speed, Range::kPositive));
  if (core_speed > 0.0) out.speed_flops = core_speed * out.cores;
  OMNI_RETURN_IF_ERROR(r.read("gpu", out.gpu));
  OMNI_RETURN_IF_ERROR(r.read_bandwidth("bandwidth", out.bandwidth_Bps));
  OMNI_RETURN_IF_ERROR(r.read_duration("latency", out.latency_s));
  return Status::ok();
}

Status read_counts(const MapReader& r, std::string_view key, std::vector<std::int64_t>& out) {
  if (!r.has(key)) return Status::ok();
  std::vector<double> numbers;
  OMNI_RETURN_IF_ERROR(r.read_numbers(key, numbers, Range::kPositive));
  out.clear();
  for (double x : numbers) {
    if (x != static_cast<double>(static_cast<std::int64_t>(x)) || x > 1e6) {
      return r.error_got(key, "positive integers (at most 1e6)");
    }
    out.push_back(static_cast<std::int64_t>(x));
  }
  return Status::ok();
}

// `topology: star` or `topology: {kind: fat-tree | torus | dragonfly, <its parameters>, bandwidth, latency}`.
Status parse_topology(const ParseContext& ctx, const MapReader& cluster, ClusterSpec& out) {
  if (!cluster.has("topology")) return Status::ok();
  const YAML::Node node = cluster.get("topology");
  if (!node.IsMap()) {
    OMNI_RETURN_IF_ERROR(cluster.read_choice("topology", out.topology,
                                             {{"star", Topology::kStar},
                                              {"fat-tree", Topology::kFatTree},
                                              {"torus", Topology::kTorus},
                                              {"dragonfly", Topology::kDragonfly}}));
    if (out.topology != Topology::kStar) {
      return cluster.error("topology",
                           std::string("'") + topology_name(out.topology) +
                               "' needs its parameters: write topology: {kind: " + topology_name(out.topology) +
                               ", ...} (fat-tree: levels, down, up, link_count; torus: dimensions; "
                               "dragonfly: groups, chassis, routers, nodes; all: bandwidth, latency)");
    }
    return Status::ok();
  }
  auto reader = MapReader::open(ctx.source, node, "cluster.topology",
                                {"kind", "levels", "down", "up", "link_count", "dimensions", "groups", "chassis",
                                 "routers", "nodes", "bandwidth", "latency"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  if (!r.has("kind")) return r.error("kind", "missing (expected fat-tree, torus or dragonfly)");
  OMNI_RETURN_IF_ERROR(r.read_choice("kind", out.topology,
                                     {{"star", Topology::kStar},
                                      {"fat-tree", Topology::kFatTree},
                                      {"torus", Topology::kTorus},
                                      {"dragonfly", Topology::kDragonfly}}));
  NetworkSpec& n = out.network;
  OMNI_RETURN_IF_ERROR(r.read("levels", n.levels, Range::kPositive));
  OMNI_RETURN_IF_ERROR(read_counts(r, "down", n.down));
  OMNI_RETURN_IF_ERROR(read_counts(r, "up", n.up));
  OMNI_RETURN_IF_ERROR(read_counts(r, "link_count", n.link_count));
  OMNI_RETURN_IF_ERROR(read_counts(r, "dimensions", n.dimensions));
  OMNI_RETURN_IF_ERROR(read_counts(r, "groups", n.groups));
  OMNI_RETURN_IF_ERROR(read_counts(r, "chassis", n.chassis));
  OMNI_RETURN_IF_ERROR(read_counts(r, "routers", n.routers));
  OMNI_RETURN_IF_ERROR(r.read("nodes", n.nodes, Range::kPositive));
  OMNI_RETURN_IF_ERROR(r.read_bandwidth("bandwidth", n.bandwidth_Bps));
  OMNI_RETURN_IF_ERROR(r.read_duration("latency", n.latency_s));
  if (out.topology == Topology::kStar) return Status::ok();
  if (const Status st = check_network(out.topology, n, "cluster.topology"); !st.is_ok()) {
    return ctx.source.error(node, "cluster.topology", st.message());
  }
  const std::size_t leaves = topology_leaves(out.topology, n);
  if (leaves < out.workers.size() + 1) {
    return ctx.source.error(node, "cluster.topology",
                            "has " + std::to_string(leaves) + " leaves; " + std::to_string(out.workers.size()) +
                                " workers and the parameter server need " + std::to_string(out.workers.size() + 1));
  }
  return Status::ok();
}

// `platform: file.xml` or `platform: {file: ..., hosts: [...], parameter_server: name}`.
Status parse_platform(const ParseContext& ctx, const MapReader& cluster, ClusterSpec& out) {
  if (!cluster.has("platform")) return Status::ok();
  if (cluster.has("topology")) return cluster.error("platform", "a platform file replaces `topology`: give one");
  const YAML::Node node = cluster.get("platform");
  PlatformFileSpec& p = out.platform;
  if (node.IsMap()) {
    auto reader = MapReader::open(ctx.source, node, "cluster.platform", {"file", "hosts", "parameter_server"});
    if (!reader) return reader.status();
    if (!reader->has("file")) return reader->error("file", "missing (expected a SimGrid platform file)");
    OMNI_RETURN_IF_ERROR(reader->read("file", p.path));
    OMNI_RETURN_IF_ERROR(reader->read_strings("hosts", p.hosts));
    OMNI_RETURN_IF_ERROR(reader->read("parameter_server", p.parameter_server));
    if (!p.hosts.empty() && p.hosts.size() < out.workers.size()) {
      return reader->error("hosts", "expected one host per worker (" + std::to_string(out.workers.size()) + ")");
    }
  } else {
    OMNI_RETURN_IF_ERROR(cluster.read("platform", p.path));
  }
  p.path = ctx.resolve(p.path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p.path, ec)) {
    return cluster.error("platform", "platform file '" + p.path + "' not found");
  }
  out.topology = Topology::kPlatformFile;
  return Status::ok();
}

// `platform:` without `preset` or `nodes`: one worker per host of the file, named after it, at its speed (other
// NodeSpec fields keep their defaults: the file holds the network). The hosts are `platform.hosts` in order, else
// the file's hosts sorted by name but the named parameter server (unnamed, one host is kept for it:
// load_platform_file takes the first by name that no worker uses); `workers: N` takes the first N of them. Fills
// platform.hosts with the chosen hosts.
Status workers_from_platform(const ParseContext& ctx, const MapReader& cluster, ClusterSpec& out) {
  PlatformFileSpec& p = out.platform;
  auto hosts = read_platform_hosts(p.path);
  if (!hosts) return cluster.error("platform", hosts.status().message());
  std::map<std::string, double> speed;
  for (const PlatformHost& h : *hosts) speed[h.name] = h.speed_flops;
  std::vector<std::string> candidates = p.hosts;
  std::size_t most = candidates.size();
  if (candidates.empty()) {
    for (const auto& [name, flops] : speed) {
      if (name != p.parameter_server) candidates.push_back(name);
    }
    most = candidates.size();
    if (p.parameter_server.empty() && most > 0) --most;
  } else {
    const YAML::Node listed = cluster.get("platform")["hosts"];
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (speed.count(candidates[k]) == 0) {
        return ctx.source.error(listed[k], "cluster.platform.hosts[" + std::to_string(k) + "]",
                                "no host '" + candidates[k] + "' in '" + p.path + "'");
      }
    }
  }
  const std::string has = "'" + p.path + "' has " + std::to_string(hosts->size()) + " hosts";
  if (most == 0) {
    return cluster.error("platform", has + ": a worker and the parameter server need two (or list `hosts`)");
  }
  std::int64_t workers = static_cast<std::int64_t>(most);
  OMNI_RETURN_IF_ERROR(cluster.read("workers", workers, Range::kPositive));
  if (static_cast<std::size_t>(workers) > most) {
    const std::string why = p.hosts.empty() ? " (one host is left for the parameter server)" : " (`hosts` lists them)";
    return cluster.error("workers", "expected at most " + std::to_string(most) + " workers, got " +
                                        std::to_string(workers) + ": " + has + why);
  }
  if (static_cast<std::uint64_t>(workers) > limits::kMaxWorkers) {
    return cluster.error_got("workers", "at most " + std::to_string(limits::kMaxWorkers) + " workers");
  }
  candidates.resize(static_cast<std::size_t>(workers));
  std::map<std::string, int> uses;  // a host listed twice serves two workers, named <host> and <host>-1
  out.workers.clear();
  for (const std::string& host : candidates) {
    NodeSpec node;
    const int before = uses[host]++;
    node.name = before == 0 ? host : host + "-" + std::to_string(before);
    if (std::string bad = name_problem(node.name, limits::kMaxNameBytes); !bad.empty()) {
      return cluster.error("platform", "host '" + host + "' cannot name a worker: " + bad);
    }
    node.speed_flops = speed.at(host);
    out.workers.push_back(std::move(node));
  }
  p.hosts = std::move(candidates);
  return Status::ok();
}

// `preset` with its `workers` count.
Status parse_preset(const MapReader& r, ClusterSpec& out) {
  if (!r.has("workers")) return r.error("workers", "expected a positive integer (the preset's worker count)");
  std::int64_t workers = 0;
  OMNI_RETURN_IF_ERROR(r.read("workers", workers, Range::kPositive));
  if (static_cast<std::uint64_t>(workers) > limits::kMaxWorkers) {
    return r.error_got("workers", "at most " + std::to_string(limits::kMaxWorkers) + " workers");
  }
  std::string preset;
  OMNI_RETURN_IF_ERROR(r.read("preset", preset));
  auto made = make_cluster_preset(preset, static_cast<std::size_t>(workers));
  if (!made) return r.error("preset", made.status().message());
  out = std::move(made).value();
  return Status::ok();
}

// `nodes`, each with its `count`: the workers, named and unique.
Status parse_nodes(const ParseContext& ctx, const MapReader& r, ClusterSpec& out) {
  if (r.has("workers")) {
    return r.error("workers", "only used with `preset` or a platform file alone (list `nodes` with `count` instead)");
  }
  const YAML::Node nodes = r.get("nodes");
  if (!nodes.IsSequence() || nodes.size() == 0) return r.error_got("nodes", "a non-empty sequence of nodes");
  out.preset.clear();
  out.workers.clear();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string path = "cluster.nodes[" + std::to_string(i) + "]";
    NodeSpec spec;
    spec.name.clear();
    std::int64_t count = 1;
    OMNI_RETURN_IF_ERROR(parse_node(ctx, nodes[i], path, /*allow_count=*/true, /*speed_required=*/true, spec, count));
    if (static_cast<std::uint64_t>(count) > limits::kMaxWorkers - out.workers.size()) {
      return ctx.source.error(nodes[i], path + ".count",
                              "expected at most " + std::to_string(limits::kMaxWorkers) + " workers in all, got " +
                                  std::to_string(out.workers.size()) + " before and " + std::to_string(count) +
                                  " here");
    }
    const std::string base = spec.name.empty() ? "w" : spec.name;
    for (std::int64_t c = 0; c < count; ++c) {
      NodeSpec copy = spec;
      if (spec.name.empty()) {
        copy.name = base + std::to_string(out.workers.size());
      } else if (count > 1) {
        copy.name = base + std::to_string(c);
      }
      out.workers.push_back(std::move(copy));
    }
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < out.workers.size(); ++i) {
    if (!names.insert(out.workers[i].name).second) {
      return r.error("nodes", "worker name '" + out.workers[i].name + "' is used twice (names must be unique)");
    }
  }
  return Status::ok();
}

// `parameter_server` and `backbone`.
Status parse_server_and_backbone(const ParseContext& ctx, const MapReader& r, ClusterSpec& out) {
  if (r.has("parameter_server")) {
    std::int64_t unused = 1;
    if (out.parameter_server.name.empty()) out.parameter_server.name = "ps";
    OMNI_RETURN_IF_ERROR(parse_node(ctx, r.get("parameter_server"), "cluster.parameter_server",
                                    /*allow_count=*/false, /*speed_required=*/false, out.parameter_server, unused));
  }
  if (out.parameter_server.name.empty()) out.parameter_server.name = "ps";
  if (r.has("backbone")) {
    auto backbone = MapReader::open(ctx.source, r.get("backbone"), "cluster.backbone", {"bandwidth", "latency"});
    if (!backbone) return backbone.status();
    OMNI_RETURN_IF_ERROR(backbone->read_bandwidth("bandwidth", out.backbone_bandwidth_Bps));
    OMNI_RETURN_IF_ERROR(backbone->read_duration("latency", out.backbone_latency_s));
  }
  return Status::ok();
}

}  // namespace

Status parse_cluster(const ParseContext& ctx, const YAML::Node& node, ClusterSpec& out) {
  auto reader = MapReader::open(ctx.source, node, "cluster",
                                {"preset", "workers", "topology", "nodes", "parameter_server", "backbone", "platform"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  // Without `preset` or `nodes`, a platform file alone gives the workers (workers_from_platform).
  const bool from_platform = !r.has("preset") && !r.has("nodes") && r.has("platform");
  if (!from_platform && !r.has("preset") && !r.has("nodes")) {
    return ctx.source.error(node, "cluster", "expected one of preset, nodes, platform");
  }
  OMNI_RETURN_IF_ERROR(r.require_one_of({"preset", "nodes"}, /*at_most_one=*/true));
  if (from_platform) {
    out.preset.clear();
    out.workers.clear();
  } else if (r.has("preset")) {
    OMNI_RETURN_IF_ERROR(parse_preset(r, out));
  } else {
    OMNI_RETURN_IF_ERROR(parse_nodes(ctx, r, out));
  }
  OMNI_RETURN_IF_ERROR(parse_topology(ctx, r, out));
  OMNI_RETURN_IF_ERROR(parse_platform(ctx, r, out));
  if (from_platform) OMNI_RETURN_IF_ERROR(workers_from_platform(ctx, r, out));
  return parse_server_and_backbone(ctx, r, out);
}

}  // namespace omnilearn::scenarios::detail
