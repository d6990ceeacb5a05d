// HybridRun: the state of one run_hybrid() call (hybrid_run.h), shared by hybrid_run.cpp (the loop, the plan
// installed, the records) and hybrid_control.cpp (the controller's levels 1 to 3 and the oracle's re-solve). Private
// to hybrid/. Not thread-safe: one run owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/controller/controller.h"
#include "omnilearn/hybrid/hybrid_run.h"

namespace omnilearn::hybrid::detail {

// Level 2's local search runs for jobs of at most this many devices.
inline constexpr std::int64_t kLocalSearchDevices = 256;
// Steps the lower levels must sit at their bounds before level 3 looks for a better plan.
inline constexpr std::int64_t kBoundedSteps = 3;

// What one run holds while it steps.
class HybridRun {
 public:
  HybridRun(const HybridRunSpec& spec, const LayerCostSource& source) : spec_(spec), source_(source) {}

  Result<HybridRunResult> run(const std::function<void(std::int64_t)>& progress);

 private:
  StepConditions conditions_at(Seconds t) const;
  const StageCosts* costs_at(std::int64_t tp);
  Status initial_plan(const StepConditions& now);
  PlannerOptions planner_options(bool keep_shape) const;
  Seconds restart_cost_s() const;  // stopping, checkpointing and restarting the current plan
  Status install(HybridPlan plan, const std::string& reason, Seconds saving_s);
  Status replan(const StepConditions& speeds, const std::vector<std::int64_t>& live, const std::string& reason,
                bool keep_shape);
  // Level 3 when the lower levels sit at their bounds: a replica at its fewest micro-batches still ends last.
  bool at_bounds(const HybridStep& step) const;
  Status replan_if_it_pays(const StepConditions& estimate);
  Status start_controller();
  void record_placement();
  void record_plan(int level, const std::string& reason, Seconds cost_s, Seconds saving_s);
  // Level 2 at `speeds`: the layers of each replica, applied when their saving over the horizon pays the move.
  void rebalance_layers(const StepConditions& speeds, const char* reason);
  Status level_one(const HybridStep& step, Seconds now_s);
  StepConditions estimated_speeds(const HybridStep& step, const StepConditions& previous) const;
  void add_timeline(const HybridStep& step, Seconds start_s);
  // Devices that left, or joined in numbers enough for a replica: a re-plan for the policies that make one; returns
  // how many devices are live (an error of the re-plan in `status`).
  std::int64_t follow_membership(const StepConditions& truth, const StepConditions& measured, bool has_measured,
                                 Status& status);
  // A step's records and per-device totals; the pending overhead is charged to it.
  void account(const HybridStep& step, Seconds now, std::int64_t live);
  // The oracle, before each step: levels 2 and 1 with the true speeds.
  void resolve_with_truth(const StepConditions& truth);
  // The controller, after each step: level 1, level 3 at bounds, level 2 when due; `estimate` becomes the speeds
  // the step's measured times give.
  Status control_after(const HybridStep& step, const HybridStep* last, const StepConditions& truth, Seconds now_s,
                       StepConditions& estimate);

  const HybridRunSpec& spec_;
  const LayerCostSource& source_;
  std::map<std::int64_t, std::unique_ptr<StageCosts>> costs_;
  const StageCosts* costs_now_ = nullptr;
  HybridPlan plan_;
  std::optional<controller::Controller> controller_;
  HybridRunResult result_;
  std::int64_t step_ = 0;
  Seconds pending_s_ = 0.0;
  std::int64_t last_layer_step_ = 0;
  std::int64_t bounded_steps_ = 0;  // consecutive steps at_bounds()
  std::int64_t live_at_plan_ = 0;   // live devices when the plan in force was made (or fewer since)
  // The step a decision made now applies from: the current one before it runs, the next one after.
  std::int64_t applies_from_ = 0;
};

}  // namespace omnilearn::hybrid::detail
