#include "omnilearn/sim/simulation.h"

#include <csignal>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Engine.hpp>

#include "asp_driver.h"
#include "availability_model.h"
#include "bsp_driver.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/sim/iteration_cost_model.h"
#include "platform_builder.h"
#include "run_context.h"
#include "run_recorder.h"

namespace omnilearn::sim {
namespace {

// The oracle's knowledge: each worker's true cost now, t_k(b) = (c0 + c1 b) / (speed_k * fraction_k).
controller::TrueCostProvider true_costs(const IterationCostModel& cost, const AvailabilityModel& availability) {
  return [&cost, &availability](const controller::ClusterSnapshot& snapshot) {
    std::vector<controller::CostFunction> costs;
    costs.reserve(snapshot.workers.size());
    for (WorkerId k = 0; k < snapshot.workers.size(); ++k) {
      const double fraction = availability.fraction(k);
      costs.emplace_back([&cost, k, fraction](BatchSize b) {
        return fraction > 0.0 ? cost.seconds(k, b, fraction) : 1e300;  // a down worker can take no work
      });
    }
    return costs;
  };
}

Result<controller::Controller> make_controller(const scenarios::Scenario& scenario, const IterationCostModel& cost,
                                               const AvailabilityModel& availability) {
  controller::PolicyOptions options = scenario.policy.options;
  if (scenario.policy.name == "oracle") options.true_costs = true_costs(cost, availability);
  // The scenario names the law; in ASP mode the OmniLearn law is its asynchronous variant.
  std::string name = scenario.policy.name;
  if (scenario.mode == controller::TrainingMode::kAsp && name == "omnilearn") name = "omnilearn-asp";
  auto policy = controller::make_default_registry().make(name, options);
  if (!policy) return policy.status().with_context("policy.name");
  controller::ControllerOptions copts = scenario.controller_options();
  copts.mode = scenario.mode;
  auto c = controller::Controller::create(std::move(copts), std::move(policy).value());
  if (!c) return c.status().with_context("policy");
  return c;
}

std::vector<std::string> engine_argv(const SimOptions& options) {
  std::vector<std::string> args{"omnilearn-sim"};
  args.insert(args.end(), options.simgrid_args.begin(), options.simgrid_args.end());
  return args;
}

template <typename Driver>
Result<scenarios::RunSummary> drive(simgrid::s4u::Engine& engine, RunContext& ctx) {
  Driver driver(ctx);
  ctx.recorder.plan(ctx.controller.current_plan(), 0);
  Status listener_status;
  ctx.availability.apply_initial([&](WorkerId k, double fraction, Seconds t) {
    ctx.recorder.availability(k, fraction, t);
    const Status st = ctx.controller.report(controller::AvailabilityChange{k, t, fraction});
    if (!st.is_ok() && listener_status.is_ok()) listener_status = st;
    driver.on_availability(k, fraction);
  });
  // Workers down from the start leave the initial plan before the first step.
  auto plan = ctx.controller.plan_next(controller::DecisionPoint{0, 0, 0.0});
  if (!plan) return plan.status();
  ctx.recorder.plan(*plan, 0);
  ctx.availability.start(ctx.platform.parameter_server);
  driver.start();
  engine.run();
  OMNI_RETURN_IF_ERROR(listener_status);
  OMNI_RETURN_IF_ERROR(driver.status());
  return driver.summary();
}

}  // namespace

Result<scenarios::RunSummary> run_simulation(const scenarios::Scenario& scenario, const SimOptions& options) {
  auto cost = IterationCostModel::create(scenario.workload.model, scenario.cluster.workers);
  if (!cost) return cost.status();
  auto availability = AvailabilityModel::create(scenario);
  if (!availability) return availability.status();
  auto controller = make_controller(scenario, *cost, **availability);
  if (!controller) return controller.status();

  std::vector<std::string> args = engine_argv(options);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    // SimGrid's engine installs a SIGINT handler that exits at once, leaving the run folder half written; the
    // caller's handling (options.stop_requested) stays in force instead.
    struct sigaction caller_sigint {};
    ::sigaction(SIGINT, nullptr, &caller_sigint);
    simgrid::s4u::Engine engine(&argc, argv.data());
    ::sigaction(SIGINT, &caller_sigint, nullptr);
    auto platform = build_platform(scenario.cluster, (*availability)->pstate_fractions());
    if (!platform) return platform.status();
    (*availability)->install(platform->workers);
    auto recorder = RunRecorder::open(scenario, options);
    if (!recorder) return recorder.status();
    RunContext ctx{scenario, options, *platform, *cost, **availability, *controller, **recorder};
    auto summary = scenario.mode == controller::TrainingMode::kAsp ? drive<AspDriver>(engine, ctx)
                                                                     : drive<BspDriver>(engine, ctx);
    if (!summary) return summary.status();
    if (options.stop_requested && options.stop_requested()) {
      OMNI_RETURN_IF_ERROR((*recorder)->close());
      return Status::internal(options.output_dir + ": stopped on request; the rows so far are kept, with no "
                              "summary.json");
    }
    summary->policy = scenario.policy.name;
    OMNI_RETURN_IF_ERROR((*recorder)->finish(*summary));
    return summary;
  } catch (const std::exception& e) {
    return Status::internal(std::string("simgrid: ") + e.what());
  }
}

}  // namespace omnilearn::sim
