// BatchPolicy: the seam between the Controller and a batch-sizing law. A policy sees a ClusterSnapshot
// (measured facts, bounds, the global batch) and returns a BatchPlan. Policies are deterministic and do no
// I/O; one instance is used from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "omnilearn/base/units.h"

namespace omnilearn::controller {

enum class TrainingMode { kBsp, kAsp };

// One measured period: the smoothed compute time per iteration while the worker ran at `batch`.
struct Observation {
  BatchSize batch = 0;
  Seconds compute_s = 0.0;
};

// What a policy knows about one worker at a decision point.
struct WorkerView {
  WorkerId id = 0;
  bool live = true;
  BatchSize batch = 0;           // batch in force now; 0 when not live
  Seconds compute_s = 0.0;       // smoothed compute time per iteration at `batch`; 0 when not measured yet
  BatchSize lo = 1;              // bounds in force (the memory guard may have lowered hi)
  BatchSize hi = 1;
  double nominal_capacity = 1.0; // declared relative speed (any positive scale), for open-loop policies
  double last_throughput = 0.0;  // samples/s when last measured (kept across leave/join); 0 if never
  // Earlier measured periods at other batches, oldest first (the current one is batch/compute_s above). Points
  // into the Controller's storage: valid until its next call.
  std::span<const Observation> history;

  bool measured() const { return live && compute_s > 0.0; }
};

struct ClusterSnapshot {
  std::int64_t step = 0;
  Seconds now_s = 0.0;
  TrainingMode mode = TrainingMode::kBsp;
  BatchSize global_batch = 0;  // BSP: the sum a plan must hit, already clamped to the live workers' bounds
  std::vector<WorkerView> workers;  // indexed by WorkerId
};

// Batch per worker, indexed by WorkerId; 0 for workers that are not live.
struct BatchPlan {
  std::vector<BatchSize> batch;
};

class BatchPolicy {
 public:
  virtual ~BatchPolicy() = default;
  // The registry name of this policy ("uniform", "omnilearn", ...).
  virtual std::string_view name() const = 0;
  // Returns the next plan for `snapshot`. Must not fail: the Controller validates the result.
  virtual BatchPlan decide(const ClusterSnapshot& snapshot) = 0;
};

}  // namespace omnilearn::controller
