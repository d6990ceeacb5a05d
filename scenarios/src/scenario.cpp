#include "omnilearn/scenarios/scenario.h"

#include <filesystem>

namespace omnilearn::scenarios {

std::string Scenario::resolve_path(const std::string& path) const {
  namespace fs = std::filesystem;
  std::error_code ec;  // a path that cannot be examined (too long, a loop) is resolved like a missing one
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, ec) || source_path.empty()) return path;
  return (fs::path(source_path).parent_path() / path).string();
}

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
