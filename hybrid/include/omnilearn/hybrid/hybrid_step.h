// One training step of a hybrid job: each replica's pipeline (pipeline_step.h) on its devices at their current
// speeds, pipeline transfers on the network (a node's GPUs share NVLink; across nodes the slower end's bandwidth),
// then each layer's gradients all-reduced over the replicas holding it (a ring; a layer's all-reduce starts when
// every replica's stage holding it has run its last backward) and the optimizer update. A TP group runs at its
// slowest member. Transfers are costed from bandwidth and latency, without contention between flows. Also the
// memory each device needs (check_memory). Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/hybrid/hybrid_job.h"
#include "omnilearn/hybrid/pipeline_step.h"
#include "omnilearn/hybrid/stage_costs.h"

namespace omnilearn::hybrid {

// The speeds a step runs at: per device its fraction of full speed (> 0 for devices in the plan), per node a factor
// on its network bandwidth (1: as specified).
struct StepConditions {
  std::vector<double> speed;
  std::vector<double> node_link;
};

struct StepOptions {
  double grad_bytes_per_param = 4.0;  // gradients all-reduced in 32-bit (Megatron-LM's default)
  bool keep_ops = false;              // keep every pass's span (the timeline)
};

// Where one device's step went; the four add up to the step.
struct DeviceTime {
  Seconds compute_s = 0.0;  // forward, backward and the update
  Seconds bubble_s = 0.0;   // idle inside its pipeline, before its last backward
  Seconds comm_s = 0.0;     // its gradient all-reduces
  Seconds wait_s = 0.0;     // idle after that, until the slowest device ends the step
};

struct HybridStep {
  Seconds step_s = 0.0;
  std::vector<Seconds> replica_s;                     // per replica: its pipeline's makespan (the level-1 signal)
  std::vector<std::vector<Seconds>> stage_compute_s;  // [replica][stage]: a stage's pass seconds this step
  std::vector<DeviceTime> device;                     // per cluster device (zero outside the plan)
  std::vector<ReplicaStep> pipelines;                 // per replica (ops kept with StepOptions::keep_ops)
  std::vector<Seconds> allreduce_end_s;               // per cluster device: when its all-reduces ended
};

Result<HybridStep> simulate_step(const HybridPlan& plan, const HybridCluster& cluster, const StageCosts& costs,
                                 const StepConditions& conditions, const StepOptions& options = {});

// The per-pass times of one replica at the given speeds, as simulate_step feeds run_pipeline.
ReplicaTimes replica_times(const HybridPlan& plan, std::int64_t replica, const HybridCluster& cluster,
                           const StageCosts& costs, const StepConditions& conditions);

struct MemoryOptions {
  // Weights, gradients and Adam's state per parameter with mixed precision: 2 + 4 + 4 + 4 + 4 (Megatron-LM).
  double state_bytes_per_param = 18.0;
};

struct DeviceMemory {
  double state_bytes = 0.0;       // its layers' parameters x state_bytes_per_param
  double activation_bytes = 0.0;  // the most micro-batches' activations its schedule holds at once
  std::int64_t in_flight = 0;     // that many micro-batch passes (over its chunks)
  double total() const { return state_bytes + activation_bytes; }
};

// Per cluster device (zero outside the plan). The activations held follow the stage's pass order: a forward
// keeps its chunk's activations until its backward.
std::vector<DeviceMemory> plan_memory(const HybridPlan& plan, const HybridCluster& cluster, const StageCosts& costs,
                                      const MemoryOptions& options = {});
// An error naming the first device whose plan does not fit its kind's memory, with the parts.
Status check_memory(const HybridPlan& plan, const HybridCluster& cluster, const StageCosts& costs,
                    const MemoryOptions& options = {});

}  // namespace omnilearn::hybrid
