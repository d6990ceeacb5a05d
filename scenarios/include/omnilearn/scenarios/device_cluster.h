// Device clusters: clusters described by device kind (36 V100 + 36 P100 + 36 K80 ...) rather than by flop/s per
// worker, for several jobs sharing one heterogeneous cluster. Presets are YAML files in scenarios/clusters/ (gavel,
// sia, pollux); each device kind's per-model speed comes from traces::DeviceSpeedTable. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/device_speeds.h"

namespace omnilearn::scenarios {

// `nodes` hosts of one kind, each with `gpus_per_node` devices.
struct DeviceGroup {
  std::string device;                  // a kind of the device table ("v100", "t4", ...)
  std::int64_t nodes = 0;              // >= 1
  std::int64_t gpus_per_node = 0;      // >= 1
  std::optional<double> bandwidth_Bps;  // each node's link, when the source states it
  std::optional<double> latency_s;
  std::string host;                    // what the source says a node is ("AWS g4dn.12xlarge", ...); may be empty
};

struct DeviceCluster {
  std::string name;
  std::string source;  // the work whose cluster this is
  std::vector<DeviceGroup> groups;

  std::int64_t gpus() const;                          // all devices
  std::int64_t gpus_of(std::string_view device) const;  // devices of one kind
};

// Reads a device-cluster YAML file (keys name, source, groups: [{device, nodes, gpus_per_node, bandwidth, latency,
// host}]). Errors read "file:line: field: what".
Result<DeviceCluster> load_device_cluster(const std::string& path);
Result<DeviceCluster> parse_device_cluster(std::string_view text, const std::string& source_name);

// An error naming the group whose device kind `table` does not list.
Status check_device_kinds(const DeviceCluster& cluster, const traces::DeviceSpeedTable& table);

// The shipped presets ("gavel", "pollux", "sia") and the file of one under a data folder (the source tree or the
// installed share/omnilearn): <data_dir>/scenarios/clusters/<name>.yaml.
std::vector<std::string> device_cluster_preset_names();
Result<std::string> device_cluster_preset_file(std::string_view name, const std::string& data_dir);

}  // namespace omnilearn::scenarios
