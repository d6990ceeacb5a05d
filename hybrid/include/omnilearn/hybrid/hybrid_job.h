// A hybrid-parallel job on a cluster of GPUs: the cluster (kinds, nodes, devices, network), the job's shape
// (DP x PP x TP), and a plan (which device holds which (replica, stage, TP rank), layers per virtual stage and
// micro-batches per replica). validate_plan() refuses a plan that cannot run, naming the field. Plain values:
// thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/hybrid/pipeline_schedule.h"

namespace omnilearn::hybrid {

struct DeviceKind {
  std::string name;                // as the cost source knows it (e.g. "A100-40")
  double memory_bytes = 0.0;       // one GPU's memory
  std::int64_t gpus_per_node = 4;  // TP groups stay inside a node
  double peak_flops = 0.0;         // the transformer shorthand's peak (FLOP/s); unused with measured profiles
  double efficiency = 0.5;         // the shorthand's fraction of peak
  double intra_node_bytes_per_s = 0.0;  // between two GPUs of one node (NVLink)
};

// One GPU. Devices are numbered in the order of the cluster's nodes.
struct Device {
  std::int64_t kind = 0;  // index into HybridCluster::kinds
  std::int64_t node = 0;
};

struct HybridNetwork {
  double inter_node_bytes_per_s = 12.5e9;  // one GPU's share of its node's network (100 Gb/s)
  Seconds latency_s = 5e-6;                // per message, inside or across nodes
};

struct HybridCluster {
  std::vector<DeviceKind> kinds;
  std::vector<Device> devices;
  std::int64_t nodes = 0;
  HybridNetwork network;
};

struct HybridShape {
  std::int64_t dp = 1;
  std::int64_t pp = 1;
  std::int64_t tp = 1;
  std::int64_t devices() const { return dp * pp * tp; }
};

// Where one device sits in the job.
struct Placement {
  std::int64_t replica = 0;
  std::int64_t stage = 0;
  std::int64_t tp_rank = 0;
};

struct HybridPlan {
  HybridShape shape;
  PipelineSchedule schedule;
  std::int64_t micro_batch = 1;  // samples per micro-batch
  // group[(replica x pp + stage) x tp + tp_rank] = the device holding that place.
  std::vector<std::int64_t> group;
  // layers[replica][j]: the layers of virtual stage j (chunk x pp + stage), contiguous in j's order, covering the
  // model's layers 0..L-1 once; uneven allowed, >= 1 each.
  std::vector<std::vector<std::int64_t>> layers;
  std::vector<std::int64_t> micro_batches;  // per replica, >= 1; their sum x micro_batch is the global batch

  std::int64_t device_at(std::int64_t replica, std::int64_t stage, std::int64_t tp_rank) const {
    return group[static_cast<std::size_t>((replica * shape.pp + stage) * shape.tp + tp_rank)];
  }
  std::int64_t virtual_stages() const { return shape.pp * schedule.chunks; }
  // The first layer of virtual stage j of `replica`.
  std::int64_t first_layer(std::int64_t replica, std::int64_t j) const;
};

// Checks `plan` against the cluster and a model of `layer_count` layers and a global batch of `global_batch`
// samples: the shape's product equals the devices named; every device named once and existing; a TP group on one
// node and no larger than its kind's gpus_per_node; layers cover the model with >= 1 per virtual stage; micro-batches
// >= 1 summing to global_batch / micro_batch; the schedule valid for each replica's count. Errors name the field
// ("layers[1]: ...", "group: device 7 ...").
Status validate_plan(const HybridPlan& plan, const HybridCluster& cluster, std::int64_t layer_count,
                     std::int64_t global_batch);

// Megatron-LM's default split, the same in every replica: the transformer layers (all but the embedding, layer 0,
// and the head, the last) evenly over the virtual stages (the later ones take one more when it does not divide),
// the embedding with the first stage and the head with the last.
std::vector<std::int64_t> even_layers(std::int64_t layer_count, std::int64_t virtual_stages);
// Micro-batches split evenly (the first replicas take one more when it does not divide).
std::vector<std::int64_t> even_micro_batches(std::int64_t total, std::int64_t replicas);

// The default layout over `devices` (in that order): TP ranks on consecutive GPUs of one node, the stages of a
// replica next, then replicas: device i of the list gets replica i / (pp x tp), stage (i / tp) mod pp, rank i mod tp.
// Errors when the list is short or a TP group would cross a node.
Result<std::vector<std::int64_t>> default_layout(const HybridCluster& cluster, const HybridShape& shape,
                                                 const std::vector<std::int64_t>& devices);

}  // namespace omnilearn::hybrid
