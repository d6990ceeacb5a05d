// Controller: owns a BatchPolicy, turns timestamped facts from a driver (simulator or testbed) into
// validated batch plans with gradient weights. It never reads a clock. Not thread-safe: one driver thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/controller/batch_policy.h"

namespace omnilearn::controller {

// Per-worker settings, fixed for a run.
struct WorkerSpec {
  BatchSize lo = 16;              // smallest batch this worker may get while live
  BatchSize hi = 96;              // largest batch (e.g. what fits in its memory)
  double nominal_capacity = 1.0;  // declared relative speed, used by open-loop policies and for joiners
};

enum class DecisionTrigger {
  kEveryNIterations,  // every `every_n` steps
  kEveryEpoch,        // when DecisionPoint::epoch advances
  kImbalance,         // when max|t_k - t̄| / t̄ >= imbalance_threshold (checked at most every `every_n` steps)
};

struct ControllerOptions {
  TrainingMode mode = TrainingMode::kBsp;
  BatchSize global_batch = 128;        // B, conserved exactly in BSP
  std::vector<WorkerSpec> workers;     // one per worker; WorkerId is the index
  double dead_band = 0.05;             // δ: apply a plan only if max_k |b'_k - b_k| / b_k >= δ
  double ewma_alpha = 0.1;             // weight of the newest compute time in the smoothed t_k, in (0, 1]
  DecisionTrigger trigger = DecisionTrigger::kEveryNIterations;
  std::int64_t every_n = 10;           // steps between decisions (kEveryNIterations, and spacing for kImbalance)
  double imbalance_threshold = 0.05;   // for kImbalance
  bool memory_guard = true;            // lower hi_k to the previous batch if throughput fell after b_k grew
  // Relative throughput drop that counts as "fell". Device-memory thrashing costs far more than timing noise on
  // a shared machine (measured: up to ~20% between periods on a throttled CPU), hence the wide default.
  double memory_guard_tolerance = 0.25;
  std::size_t history_length = 8;      // observations kept per worker for fitting policies

  // Returns an error naming the first invalid field.
  Status validate() const;
};

// Facts a driver reports. Times are the driver's clock (simulated or wall), in seconds.
struct IterationDone {
  WorkerId worker = 0;
  std::int64_t step = 0;
  Seconds end_s = 0.0;
  Seconds compute_s = 0.0;  // forward + backward only: no waiting, no communication
  BatchSize batch = 0;      // the batch the iteration ran with
};
struct AvailabilityChange {
  WorkerId worker = 0;
  Seconds time_s = 0.0;
  double fraction = 1.0;  // of nominal capacity; 0 means down (the worker leaves the plan)
};
struct MembershipChange {
  WorkerId worker = 0;
  Seconds time_s = 0.0;
  bool joined = false;  // false: the worker left
};
struct DecisionPoint {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  Seconds now_s = 0.0;
};

enum class PlanReason { kInitial, kScheduled, kMembership, kHeldByDeadBand, kNotDue };
const char* to_string(PlanReason reason);

struct Plan {
  std::int64_t step = 0;
  Seconds time_s = 0.0;
  std::vector<BatchSize> batch;  // per worker; 0 when not live
  std::vector<double> weight;    // λ_k = b_k / Σb; a SUM all-reduce of λ-weighted gradients is the mean gradient
  BatchSize global_batch = 0;    // Σb of this plan
  bool decided = false;          // the policy was consulted at this call
  bool changed = false;          // batches differ from the plan in force before this call
  PlanReason reason = PlanReason::kNotDue;
  double imbalance = 0.0;        // max|t_k - t̄| / t̄ over measured live workers when asked; 0 if unknown
};

class Controller {
 public:
  // Validates the options and makes the initial plan (equal split, or the policy's open-loop split).
  static Result<Controller> create(ControllerOptions options, std::unique_ptr<BatchPolicy> policy);

  Status report(const IterationDone& event);
  Status report(const AvailabilityChange& event);
  Status report(const MembershipChange& event);

  // Called by the driver at a point where batches may change. Decides if a decision is due (trigger, or a
  // membership change since the last plan), consults the policy, validates its plan, applies the dead-band and
  // returns the plan in force from now on. An error means the policy produced an invalid plan.
  Result<Plan> plan_next(const DecisionPoint& at);

  const Plan& current_plan() const { return plan_; }
  const BatchPolicy& policy() const { return *policy_; }
  const ControllerOptions& options() const { return options_; }
  std::size_t worker_count() const { return workers_.size(); }
  bool is_live(WorkerId worker) const { return workers_.at(worker).live; }
  // Imbalance max|t_k - t̄| / t̄ over measured live workers; nullopt unless every live worker is measured.
  std::optional<double> imbalance() const;
  // The snapshot a policy would see now (exposed for tests and tracing).
  ClusterSnapshot snapshot(std::int64_t step, Seconds now_s) const;

 private:
  struct WorkerState {
    WorkerSpec spec;
    bool live = true;
    BatchSize hi = 0;             // hi in force (memory guard may lower it)
    Seconds ewma_s = 0.0;
    std::int64_t samples = 0;     // iterations folded into ewma_s at the current batch
    double last_throughput = 0.0;
    BatchSize previous_batch = 0;     // batch before the last applied change
    double previous_throughput = 0.0; // throughput measured at previous_batch
    bool disturbed = false;           // availability changed since the last applied change
    std::vector<Observation> history;
  };

  Controller(ControllerOptions options, std::unique_ptr<BatchPolicy> policy);
  BatchSize effective_global_batch() const;
  Status validate_plan(const BatchPlan& plan, BatchSize global_batch) const;
  // `imbalance`: imbalance() now (plan_next computes it once: it scans every worker, at every ASP update).
  bool decision_due(const DecisionPoint& at, std::optional<double> imbalance) const;
  void apply_memory_guard();
  void close_measurement_period(std::size_t k);
  void install(const std::vector<BatchSize>& batch, const DecisionPoint& at);
  void set_live(WorkerId worker, bool live);

  ControllerOptions options_;
  std::unique_ptr<BatchPolicy> policy_;
  std::vector<WorkerState> workers_;
  Plan plan_;
  bool membership_dirty_ = false;
  std::int64_t last_decision_step_ = 0;
  std::int64_t last_decision_epoch_ = 0;
};

}  // namespace omnilearn::controller
