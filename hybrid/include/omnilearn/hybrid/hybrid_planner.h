// The hybrid controller's solvers, from the cheapest to the dearest: micro-batches per replica so that replicas end
// together (level 1), layers per stage inside a replica so that its slowest stage is as fast as it can be (level 2),
// and a whole plan: shape, device mapping, layers and micro-batches (level 3, the planner). Each takes the speeds
// it should plan for; callers decide whose (measured, true, or the initial ones). Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/hybrid/hybrid_job.h"
#include "omnilearn/hybrid/hybrid_step.h"
#include "omnilearn/hybrid/stage_costs.h"

namespace omnilearn::hybrid {

// Level 1: micro-batches per replica summing to plan's total so that the replicas' pipelines end together, from
// each replica's affine T_r(m) = alpha_r + beta_r x m (two pipeline evaluations at the given speeds), by
// controller::solve_equal_time and largest-remainder rounding. Interleaved plans move whole groups of pp.
Result<std::vector<std::int64_t>> balance_micro_batches(const HybridPlan& plan, const HybridCluster& cluster,
                                                        const StageCosts& costs, const StepConditions& conditions);

// Level 2: layers per virtual stage of `replica` minimising its slowest stage's forward + backward per micro-batch
// at the given speeds (exact: a bisection on the bottleneck with a greedy cover, which is optimal for contiguous
// stages), each device's weights and optimizer state within its memory. Returns the plan's current layers when no
// partition fits.
std::vector<std::int64_t> balance_layers(const HybridPlan& plan, std::int64_t replica, const HybridCluster& cluster,
                                         const StageCosts& costs, const StepConditions& conditions,
                                         const MemoryOptions& memory = {});

struct PlannerOptions {
  PipelineSchedule schedule;
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  std::vector<std::int64_t> tp_degrees = {1, 2, 4, 8};  // tried when the source has them and nodes are big enough
  std::int64_t max_pp = 64;
  // When set (> 0), only this shape is tried (the device mapping, layers and micro-batches are still planned).
  HybridShape fixed_shape{0, 0, 0};
  MemoryOptions memory;
  StepOptions step;
};

struct PlannedJob {
  HybridPlan plan;
  Seconds predicted_step_s = 0.0;
};

// Level 3: the plan with the shortest predicted step on the `live` devices at the given speeds: every shape
// (tp within a node, pp up to max_pp, dp as many replicas as fit or half as many, leaving the slowest out), TP groups inside nodes, the fastest groups dealt
// to replicas in turn (fastest first, then back) so replicas are alike, then levels 2 and 1, checked for memory.
// `costs_at(tp)` gives the stage costs at the planner's micro-batch and that tp (an error skips the tp). An error
// when no shape fits.
template <typename CostsAt>
Result<PlannedJob> plan_job(const HybridCluster& cluster, const std::vector<std::int64_t>& live,
                            const StepConditions& conditions, const PlannerOptions& options, CostsAt costs_at);

// Used by plan_job: the plan for one shape, or an error saying why it does not fit.
Result<PlannedJob> plan_shape(const HybridCluster& cluster, const std::vector<std::int64_t>& live,
                              const StepConditions& conditions, const PlannerOptions& options, const HybridShape& shape,
                              const StageCosts& costs);

template <typename CostsAt>
Result<PlannedJob> plan_job(const HybridCluster& cluster, const std::vector<std::int64_t>& live,
                            const StepConditions& conditions, const PlannerOptions& options, CostsAt costs_at) {
  Result<PlannedJob> best = Status::invalid_argument("no shape fits the live devices");
  const std::int64_t n = static_cast<std::int64_t>(live.size());
  for (std::int64_t tp : options.tp_degrees) {
    if (options.fixed_shape.tp > 0 && tp != options.fixed_shape.tp) continue;
    const StageCosts* costs = costs_at(tp);
    if (costs == nullptr) continue;
    for (std::int64_t pp = 1; pp <= std::min(options.max_pp, costs->layer_count()); ++pp) {
      if (options.fixed_shape.pp > 0 && pp != options.fixed_shape.pp) continue;
      std::int64_t most = n / (pp * tp);
      if (options.fixed_shape.dp > 0) most = std::min(most, options.fixed_shape.dp);
      // As many replicas as fit, then half as many and so on (on the fastest groups): slow devices may be left out.
      std::vector<std::int64_t> replicas = {most};
      if (options.fixed_shape.dp <= 0 && most / 2 >= 1) replicas.push_back(most / 2);
      for (std::int64_t dp : replicas) {
        if (dp < 1) continue;
        auto planned = plan_shape(cluster, live, conditions, options, {dp, pp, tp}, *costs);
        if (!planned.is_ok()) {
          if (!best.is_ok()) best = planned.status();
          continue;
        }
        if (!best.is_ok() || planned->predicted_step_s < best->predicted_step_s) best = std::move(planned);
      }
    }
  }
  return best;
}

}  // namespace omnilearn::hybrid
