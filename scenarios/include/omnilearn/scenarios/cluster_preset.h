// Cluster presets ("edge", "cloud", "hpc"): ready-made heterogeneous clusters for scenario files that write
// `cluster: {preset: cloud, workers: 8}`. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <optional>
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

// The documented power figures of a preset's node (docs/energy.md, with sources): per core for CPU nodes, per device
// for GPU nodes. None for an unknown preset or a node the preset does not make.
//   edge : 0.675 W idle, 1.6 W busy per core (Raspberry Pi 4B: 2.7 W idle, 6.4 W with 4 cores stressed)
//   cloud: 0.74 W idle, 3.5 W busy per vCPU (Cloud Carbon Footprint, AWS per-vCPU min / max)
//   hpc  : device_kind_power("v100") for the 1e14 nodes (25 W idle, assumed; busy 39 W at batch 8 to 188 W at 1024,
//          Zeus, NSDI'23) and device_kind_power("p100") for the P100-class 3e13 nodes (the curve scaled to 250 W)
// The hpc GPUs' busy curve is read from the measured table at this workload and limit (DevicePower::table).
std::optional<DevicePower> preset_power(std::string_view preset, const NodeSpec& node);
inline constexpr std::string_view kHpcTableWorkload = "cifar100/shufflenetv2/adadelta";
inline constexpr double kHpcTableLimitW = 250.0;

// The power figures of one GPU of a device kind of traces/devices/device-kinds.csv (k80, p100, v100, t4, a100,
// rtx2080ti; docs/energy.md, with sources), the one home of per-kind GPU figures (the hpc preset's V100 and P100-class
// nodes take theirs from here): idle, and busy as Zeus' measured V100 batch curve scaled to the kind's idle and board
// power (TDP, the vendor's data sheet): P(b) = idle + (P_V100(b) - 25) / (300 - 25) x (TDP - idle). No off figure
// (0 W). None for another kind.
std::optional<DevicePower> device_kind_power(std::string_view kind);
// The kind's board power (TDP) in watts, per GPU; none for a kind device_kind_power does not know.
std::optional<double> device_kind_tdp_w(std::string_view kind);

}  // namespace omnilearn::scenarios
