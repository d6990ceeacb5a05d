#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

controller::ControllerOptions Scenario::controller_options() const {
  controller::ControllerOptions o;
  o.mode = mode;
  o.global_batch = workload.global_batch;
  o.workers.reserve(cluster.workers.size());
  for (const NodeSpec& node : cluster.workers) {
    controller::WorkerSpec w;
    w.lo = policy.min_batch;
    w.hi = policy.max_batch;
    w.nominal_capacity = node.speed_flops;
    o.workers.push_back(w);
  }
  o.dead_band = policy.dead_band;
  o.ewma_alpha = policy.ewma_alpha;
  o.trigger = policy.trigger;
  o.every_n = policy.every_n;
  o.imbalance_threshold = policy.imbalance_threshold;
  o.memory_guard = policy.memory_guard;
  o.memory_guard_tolerance = policy.memory_guard_tolerance;
  o.history_length = policy.fit_window;
  return o;
}

}  // namespace omnilearn::scenarios
