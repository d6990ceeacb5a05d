#include "omnilearn/scenarios/device_cluster.h"

#include "map_reader.h"
#include "omnilearn/base/input_limits.h"
#include "yaml_source.h"

namespace omnilearn::scenarios {
namespace {

// Devices in one cluster: the input limit on workers in a cluster.
constexpr auto kMaxCount = static_cast<std::int64_t>(limits::kMaxWorkers);

}  // namespace

std::int64_t DeviceCluster::gpus() const {
  std::int64_t n = 0;
  for (const DeviceGroup& g : groups) n += g.nodes * g.gpus_per_node;
  return n;
}

std::int64_t DeviceCluster::gpus_of(std::string_view device) const {
  std::int64_t n = 0;
  for (const DeviceGroup& g : groups) n += g.device == device ? g.nodes * g.gpus_per_node : 0;
  return n;
}

Result<DeviceCluster> parse_device_cluster(std::string_view text, const std::string& source_name) {
  using detail::MapReader;
  using detail::Range;
  detail::YamlSource source(source_name);
  auto root = source.load(text);
  if (!root) return root.status();
  auto top = MapReader::open(source, *root, "", {"name", "source", "groups"});
  if (!top) return top.status();
  DeviceCluster out;
  if (!top->has("name")) return top->error("name", "missing (expected the cluster's name)");
  OMNI_RETURN_IF_ERROR(top->read("name", out.name));
  OMNI_RETURN_IF_ERROR(top->read("source", out.source));
  const YAML::Node groups = top->get("groups");
  if (!groups || !groups.IsSequence() || groups.size() == 0) {
    return top->error_got("groups", "a non-empty list of {device, nodes, gpus_per_node}");
  }
  std::int64_t total = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    auto r = MapReader::open(source, groups[i], "groups[" + std::to_string(i) + "]",
                             {"device", "nodes", "gpus_per_node", "bandwidth", "latency", "host"});
    if (!r) return r.status();
    DeviceGroup g;
    for (const char* key : {"device", "nodes", "gpus_per_node"}) {
      if (!r->has(key)) return r->error(key, "missing");
    }
    OMNI_RETURN_IF_ERROR(r->read("device", g.device));
    if (g.device.empty()) return r->error("device", "expected a device kind (v100, t4, ...)");
    OMNI_RETURN_IF_ERROR(r->read("nodes", g.nodes, Range::kPositive));
    OMNI_RETURN_IF_ERROR(r->read("gpus_per_node", g.gpus_per_node, Range::kPositive));
    if (g.nodes > kMaxCount || g.gpus_per_node > kMaxCount || (total += g.nodes * g.gpus_per_node) > kMaxCount) {
      return r->error("nodes", "expected at most " + std::to_string(kMaxCount) + " devices in the cluster");
    }
    if (r->has("bandwidth")) {
      double bw = 0.0;
      OMNI_RETURN_IF_ERROR(r->read_bandwidth("bandwidth", bw));
      g.bandwidth_Bps = bw;
    }
    if (r->has("latency")) {
      double lat = 0.0;
      OMNI_RETURN_IF_ERROR(r->read_duration("latency", lat));
      g.latency_s = lat;
    }
    OMNI_RETURN_IF_ERROR(r->read("host", g.host));
    out.groups.push_back(std::move(g));
  }
  return out;
}

Result<DeviceCluster> load_device_cluster(const std::string& path) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  return parse_device_cluster(*text, path);
}

Status check_device_kinds(const DeviceCluster& cluster, const traces::DeviceSpeedTable& table) {
  for (std::size_t i = 0; i < cluster.groups.size(); ++i) {
    const std::string& d = cluster.groups[i].device;
    if (table.find_kind(d) == nullptr) {
      std::string known;
      for (const traces::DeviceKind& k : table.kinds()) known += (known.empty() ? "" : ", ") + k.name;
      return Status::not_found("cluster '" + cluster.name + "': groups[" + std::to_string(i) + "].device '" + d +
                               "' is not a kind of the device table (expected one of: " + known + ")");
    }
  }
  return Status::ok();
}

std::vector<std::string> device_cluster_preset_names() { return {"gavel", "pollux", "sia"}; }

Result<std::string> device_cluster_preset_file(std::string_view name, const std::string& data_dir) {
  for (const std::string& n : device_cluster_preset_names()) {
    if (n == name) return data_dir + "/scenarios/clusters/" + n + ".yaml";
  }
  std::string known;
  for (const std::string& n : device_cluster_preset_names()) known += (known.empty() ? "" : ", ") + n;
  return Status::invalid_argument("unknown device-cluster preset '" + std::string(name) + "' (expected one of: " +
                                  known + ")");
}

}  // namespace omnilearn::scenarios
