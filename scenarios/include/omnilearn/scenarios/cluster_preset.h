// Cluster presets ("edge", "cloud", "hpc"): ready-made heterogeneous clusters for scenario files that write
// `cluster: {preset: cloud, workers: 8}`. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// Returns the preset's cluster with `workers` worker nodes named w0, w1, ... Node types are mixed in a fixed
// cycle, so the same arguments always give the same cluster:
//   edge : 4x2e9, 4x1.5e9, 2x1.2e9, 8x2.4e9 flop/s cores; 100/50/20/100 Mbps; 5-20 ms; PS 16x3e9, 1 Gbps, 1 ms
//   cloud: 2/4/8/16 vCPU x 1e10 flop/s; 10/10/16/25 Gbps; 50 us; PS 16 vCPU, 25 Gbps; backbone 100 Gbps
//   hpc  : GPU nodes of 1e14 and 3e13 flop/s; 200/100 Gbps; 1 us; backbone 400 Gbps
//   hpc-fat-tree: the hpc nodes on a two-level fat-tree (16 hosts per leaf switch, 4 core switches, 200 Gbps and
//          1 us links; 4:1 oversubscribed), sized for the workers plus the parameter server
// An error for an unknown preset (listing the known ones) or zero workers.
Result<ClusterSpec> make_cluster_preset(std::string_view preset, std::size_t workers);
std::vector<std::string> cluster_preset_names();

}  // namespace omnilearn::scenarios
