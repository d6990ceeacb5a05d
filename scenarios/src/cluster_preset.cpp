#include "omnilearn/scenarios/cluster_preset.h"

#include <array>

#include "omnilearn/base/format.h"

namespace omnilearn::scenarios {
namespace {

struct NodeType {
  int cores;
  double core_speed_flops;
  bool gpu;
  double bandwidth_Bps;
  double latency_s;
};

NodeSpec make_node(std::string name, const NodeType& t) {
  NodeSpec n;
  n.name = std::move(name);
  n.cores = t.cores;
  n.speed_flops = t.cores * t.core_speed_flops;
  n.gpu = t.gpu;
  n.bandwidth_Bps = t.bandwidth_Bps;
  n.latency_s = t.latency_s;
  return n;
}

constexpr double kMbps = 1e6 / 8.0;
constexpr double kGbps = 1e9 / 8.0;

struct Preset {
  const char* name;
  std::array<NodeType, 4> cycle;
  NodeType parameter_server;
  double backbone_Bps;
  double backbone_latency_s;
};

// GPU nodes count one "core" per GPU: cores_k only matters for `cores` availability schedules.
constexpr std::array<Preset, 3> kPresets{{
    {"edge",
     {{{4, 2.0e9, false, 100 * kMbps, 5e-3},
       {4, 1.5e9, false, 50 * kMbps, 10e-3},
       {2, 1.2e9, false, 20 * kMbps, 20e-3},
       {8, 2.4e9, false, 100 * kMbps, 5e-3}}},
     {16, 3.0e9, false, 1 * kGbps, 1e-3},
     1 * kGbps,
     1e-3},
    {"cloud",
     {{{2, 1e10, false, 10 * kGbps, 50e-6},
       {4, 1e10, false, 10 * kGbps, 50e-6},
       {8, 1e10, false, 16 * kGbps, 50e-6},
       {16, 1e10, false, 25 * kGbps, 50e-6}}},
     {16, 1e10, false, 25 * kGbps, 50e-6},
     100 * kGbps,
     10e-6},
    {"hpc",
     {{{1, 1e14, true, 200 * kGbps, 1e-6},
       {1, 3e13, true, 100 * kGbps, 1e-6},
       {1, 1e14, true, 200 * kGbps, 1e-6},
       {1, 3e13, true, 100 * kGbps, 1e-6}}},
     {64, 2e10, false, 200 * kGbps, 1e-6},
     400 * kGbps,
     1e-6},
}};

}  // namespace

namespace {

// hpc-fat-tree: the hpc nodes as the leaves of a two-level fat-tree of 16-port leaf switches (16 hosts each) and 4
// core switches, one 200 Gbps, 1 us link per pair: each leaf switch has 16 links down and 4 up (4:1 oversubscribed).
constexpr std::size_t kHostsPerLeafSwitch = 16;
constexpr std::int64_t kCoreSwitches = 4;

void make_fat_tree(ClusterSpec& c) {
  const std::size_t leaves = c.workers.size() + 1;  // the parameter server takes a leaf too
  const std::size_t switches = (leaves + kHostsPerLeafSwitch - 1) / kHostsPerLeafSwitch;
  c.topology = Topology::kFatTree;
  c.network.levels = 2;
  c.network.down = {static_cast<std::int64_t>(kHostsPerLeafSwitch), static_cast<std::int64_t>(switches)};
  c.network.up = {1, kCoreSwitches};
  c.network.link_count = {1, 1};
  c.network.bandwidth_Bps = 200 * kGbps;
  c.network.latency_s = 1e-6;
}

}  // namespace

Result<ClusterSpec> make_cluster_preset(std::string_view preset, std::size_t workers) {
  if (workers == 0) return Status::invalid_argument("a cluster preset needs at least one worker");
  if (preset == "hpc-fat-tree") {
    auto c = make_cluster_preset("hpc", workers);
    if (!c) return c.status();
    c->preset = "hpc-fat-tree";
    make_fat_tree(*c);
    return c;
  }
  for (const Preset& p : kPresets) {
    if (preset != p.name) continue;
    ClusterSpec c;
    c.preset = p.name;
    c.topology = Topology::kStar;
    for (std::size_t i = 0; i < workers; ++i) {
      std::string name = "w";
      name += std::to_string(i);  // (not "w" + ...: GCC 12 -O3 reports a false -Wrestrict there)
      c.workers.push_back(make_node(std::move(name), p.cycle[i % p.cycle.size()]));
    }
    c.parameter_server = make_node("ps", p.parameter_server);
    c.backbone_bandwidth_Bps = p.backbone_Bps;
    c.backbone_latency_s = p.backbone_latency_s;
    return c;
  }
  std::string known;
  for (const std::string& n : cluster_preset_names()) known += (known.empty() ? "" : ", ") + n;
  return Status::invalid_argument("unknown cluster preset '" + std::string(preset) + "' (expected one of: " +
                                  known + ")");
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> out;
  for (const Preset& p : kPresets) out.emplace_back(p.name);
  out.emplace_back("hpc-fat-tree");
  return out;
}

}  // namespace omnilearn::scenarios

namespace omnilearn::scenarios {

std::optional<DevicePower> preset_power(std::string_view preset, const NodeSpec& node) {
  DevicePower p;
  if (preset == "edge" && !node.gpu) {
    p.idle_w = 2.7 / 4.0;
    p.busy_w = 6.4 / 4.0;
    p.source = "Raspberry Pi 4B: 2.7 W idle, 6.4 W with 4 cores stressed, per core";
    p.idle_from = p.busy_from = std::string(kFromPreset) + " (" + p.source + ")";
    return p;
  }
  if (preset == "cloud" && !node.gpu) {
    p.idle_w = 0.74;
    p.busy_w = 3.5;
    p.source = "Cloud Carbon Footprint, AWS per-vCPU min/max";
    p.idle_from = p.busy_from = std::string(kFromPreset) + " (" + p.source + ")";
    return p;
  }
  if ((preset == "hpc" || preset == "hpc-fat-tree") && node.gpu) {
    // The busy curve: Zeus's measured rows of ShuffleNet-v2 / CIFAR-100 with Adadelta at 250 W on the kind, flat
    // outside the measured batches (run::resolve_gpu_table reads them); the kind's idle figure stays.
    const char* kind = node.speed_flops >= 1e14 ? "v100" : "p100";
    auto d = device_kind_power(kind);
    d->table = GpuTableRef{kind, std::string(kHpcTableWorkload), kHpcTableLimitW, /*refuse_outside=*/false};
    return d;
  }
  return std::nullopt;
}

}  // namespace omnilearn::scenarios

namespace omnilearn::scenarios {
namespace {

// One GPU of a device kind: its board power from the vendor's data sheet and its idle power, each with its source.
struct KindPower {
  const char* kind;
  double tdp_w;
  double idle_w;
  const char* source;
  const char* idle_from;
};
// Zeus (NSDI'23), V100: 39 W at batch 8 to 188 W at 1024, linear in log2(batch) between; the anchor of every kind's
// busy curve. Idle 25 W is this project's assumption for the V100 and the P100 (the hpc preset's since issue 27); the
// kinds without a cited idle figure take the P100's ratio, 10% of TDP.
constexpr double kV100IdleW = 25.0, kV100TdpW = 300.0, kV100At8W = 39.0, kV100At1024W = 188.0;
constexpr KindPower kKindPower[] = {
    {"k80", 150.0, 25.0,
     "K80: 300 W per board of two GPUs (NVIDIA Tesla K80 data sheet), 150 W per GPU; idle 25 W per GPU in P8 "
     "(NVIDIA developer forum, 'Tesla zero-power idle', 2021)",
     "preset (NVIDIA developer forum, 'Tesla zero-power idle')"},
    {"p100", 250.0, 25.0, "P100 PCIe: 250 W (NVIDIA Tesla P100 data sheet); idle 25 W assumed",
     "assumed law (idle 25 W, assumed)"},
    {"v100", kV100TdpW, kV100IdleW,
     "V100: Zeus (NSDI'23) 39 W at batch 8 to 188 W at 1024; 300 W SXM2 (NVIDIA V100 data sheet); idle 25 W assumed",
     "assumed law (idle 25 W, assumed)"},
    {"t4", 70.0, 7.0,
     "T4: 70 W (NVIDIA T4 data sheet); idle 10% of TDP (rule)",
     "assumed law (idle 10% of TDP)"},
    {"a100", 400.0, 40.0,
     "A100 SXM4: 400 W (NVIDIA A100 data sheet); idle 10% of TDP (rule)",
     "assumed law (idle 10% of TDP)"},
    {"rtx2080ti", 250.0, 25.0,
     "RTX 2080 Ti: 250 W reference board (NVIDIA GeForce RTX 2080 Ti specifications); idle 10% of TDP (rule)",
     "assumed law (idle 10% of TDP)"},
};

const KindPower* find_kind_power(std::string_view kind) {
  for (const KindPower& k : kKindPower) {
    if (kind == k.kind) return &k;
  }
  return nullptr;
}

}  // namespace

std::optional<DevicePower> device_kind_power(std::string_view kind) {
  const KindPower* k = find_kind_power(kind);
  if (k == nullptr) return std::nullopt;
  DevicePower p;
  p.idle_w = k->idle_w;
  p.source = k->source;
  p.idle_from = k->idle_from;
  if (kind == "v100") {
    p.busy_by_batch = {{8.0, kV100At8W}, {1024.0, kV100At1024W}};
    p.busy_from = "preset (Zeus NSDI'23: V100, ShuffleNet-v2/CIFAR-100 at 250 W, batches 8 and 1024)";
    return p;
  }
  p.busy_from = "assumed law (the V100 curve scaled to " + format_g(k->tdp_w) + " W board power)";
  // The V100's dynamic power over its own range, scaled to this kind's.
  const auto scaled = [k](double w) {
    return k->idle_w + (w - kV100IdleW) / (kV100TdpW - kV100IdleW) * (k->tdp_w - k->idle_w);
  };
  p.busy_by_batch = {{8.0, scaled(kV100At8W)}, {1024.0, scaled(kV100At1024W)}};
  return p;
}

std::optional<double> device_kind_tdp_w(std::string_view kind) {
  const KindPower* k = find_kind_power(kind);
  if (k == nullptr) return std::nullopt;
  return k->tdp_w;
}

}  // namespace omnilearn::scenarios
