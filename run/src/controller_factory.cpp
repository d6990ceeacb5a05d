#include "omnilearn/run/controller_factory.h"

#include <utility>

#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/run/records.h"

namespace omnilearn::run {

ControllerSpec controller_spec(const scenarios::Scenario& scenario) {
  ControllerSpec spec;
  spec.policy = scenario.policy.name;
  spec.gain = scenario.policy.gain;
  spec.fit_window = scenario.policy.fit_window;
  if (scenario.workload.asp.rule == scenarios::AspRule::kStalenessBounded) {
    spec.staleness_bound = static_cast<double>(scenario.workload.asp.delay_threshold);
  }
  spec.options = scenario.controller_options();
  return spec;
}

Result<controller::Controller> make_controller(const ControllerSpec& spec, controller::TrueCostProvider true_costs) {
  controller::PolicyOptions options;
  options.gain = spec.gain;
  options.fit_window = spec.fit_window;
  options.staleness_bound = spec.staleness_bound;
  options.true_costs = std::move(true_costs);
  auto policy = controller::make_default_registry().make(spec.policy, options);
  if (!policy) return policy.status().with_context("policy.name");
  auto c = controller::Controller::create(spec.options, std::move(policy).value());
  if (!c) return c.status().with_context("policy");
  return c;
}

PlanRecord plan_record(const controller::Plan& plan, std::int64_t epoch) {
  PlanRecord r;
  r.step = plan.step;
  r.epoch = epoch;
  r.time_s = plan.time_s;
  r.reason = controller::to_string(plan.reason);
  r.changed = plan.changed;
  r.imbalance = plan.imbalance;
  r.batch = plan.batch;
  r.weight = plan.weight;
  return r;
}

Result<controller::Plan> apply_start_levels(controller::Controller& ctl, const std::vector<double>& levels) {
  bool any = false;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    if (levels[k] == 1.0) continue;
    any = true;
    OMNI_RETURN_IF_ERROR(ctl.report(controller::AvailabilityChange{static_cast<WorkerId>(k), 0.0, levels[k]}));
  }
  if (!any) {  // nothing to hear: the plan stands, and nothing is decided (a testbed run without levels is as before)
    controller::Plan plan = ctl.current_plan();
    plan.decided = false;
    plan.changed = false;
    return plan;
  }
  return ctl.plan_next(controller::DecisionPoint{0, 0, 0.0});
}

}  // namespace omnilearn::run
