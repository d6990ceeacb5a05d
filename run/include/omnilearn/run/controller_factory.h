// The controller of a run, made in one place for both back ends: the simulator and the testbed's workers (BSP: every
// rank; ASP: the parameter server) build it from the same ControllerSpec, resolved once from the Scenario. Pure
// functions: thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policies.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::run {

// What a controller is made of: the policy (its registry name, already the ASP variant in ASP mode: the parser
// resolves it), the policy's plain options, and the controller's options (bounds, dead-band, trigger, workers).
struct ControllerSpec {
  std::string policy = "uniform";
  double gain = 1.0;
  std::size_t fit_window = 8;
  double staleness_bound = 0.0;  // R of workload.asp's staleness-bounded rule (its policy's bound); 0 otherwise
  controller::ControllerOptions options;
};

ControllerSpec controller_spec(const scenarios::Scenario& scenario);

// The controller with its initial plan. `true_costs` is the oracle's knowledge (only a simulator has it); the
// oracle policy without it is an error. Errors name the policy field at fault.
Result<controller::Controller> make_controller(const ControllerSpec& spec,
                                               controller::TrueCostProvider true_costs = {});

// Tells `ctl` each worker's availability at the start (`levels`: 1 nominal, 0 down; empty: every worker nominal) at
// time 0, as the simulator does before its first step, then asks for the plan at step 0, so that workers down from
// the start leave it before anyone computes. The testbed's controllers (BSP: every rank; ASP: the server) call it
// with TestbedConfig::initial_availability. Returns the plan of that call (record it when `decided`); with every
// level 1, the plan in force, not decided, and the controller is not asked.
Result<controller::Plan> apply_start_levels(controller::Controller& ctl, const std::vector<double>& levels);

}  // namespace omnilearn::run

// ControllerSpec as JSON (the testbed's config.json carries it to every worker): every field by its C++ name.
namespace omnilearn::controller {
NLOHMANN_JSON_SERIALIZE_ENUM(TrainingMode, {{TrainingMode::kBsp, "bsp"}, {TrainingMode::kAsp, "asp"}})
NLOHMANN_JSON_SERIALIZE_ENUM(DecisionTrigger, {{DecisionTrigger::kEveryNIterations, "every-n"},
                                               {DecisionTrigger::kEveryEpoch, "every-epoch"},
                                               {DecisionTrigger::kImbalance, "imbalance"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WorkerSpec, lo, hi, nominal_capacity)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ControllerOptions, mode, global_batch, workers, dead_band, ewma_alpha,
                                                trigger, every_n, imbalance_threshold, memory_guard,
                                                memory_guard_tolerance, history_length)
}  // namespace omnilearn::controller

namespace omnilearn::run {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ControllerSpec, policy, gain, fit_window, staleness_bound, options)
}  // namespace omnilearn::run
