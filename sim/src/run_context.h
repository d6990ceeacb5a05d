// RunContext: what one simulation run's drivers (BSP, ASP) share, by reference. It owns nothing: run_simulation
// owns every part and outlives the engine run. Not thread-safe: the simulation thread only.
#pragma once

#include "availability_model.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/run/run_recorder.h"
#include "omnilearn/run/stop_rule.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/iteration_cost_model.h"
#include "omnilearn/sim/sim_options.h"
#include "platform_builder.h"
#include "platform_energy.h"
#include "virtual_training.h"

namespace omnilearn::sim {

struct RunContext {
  const scenarios::Scenario& scenario;
  const SimOptions& options;
  const SimPlatform& platform;
  const IterationCostModel& cost;
  AvailabilityModel& availability;
  controller::Controller& controller;
  run::RunRecorder& recorder;
  // When the run stops: fed the progress by the drivers (TrainingProgress), the simulated time and the evaluations by
  // virtual-time training (a time-only run has neither, so emulator.time_budget_s and target_accuracy do not apply).
  run::StopRule& stop;
  VirtualTraining* training = nullptr;  // workload.numerics: real (else null: time only)
  LinkEnergy* links = nullptr;          // a platform file's links with power figures, under `energy:` (else null)
};

}  // namespace omnilearn::sim
