// ControllerSettings: the policy settings of a scenario (its `policy:` mapping, plus the global batch, the mode and
// the workers' nominal capacities) as the Python bindings take them, turned into a Controller the same way the
// scenario parser and Scenario::controller_options() do. Plain values; the functions are stateless and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::python {

// Field names are the scenario file's keys (`policy.name`, `policy.decide`, ...), so a `policy:` mapping copied
// from a scenario works unchanged. Defaults are those of scenarios::PolicySpec.
struct ControllerSettings {
  std::string name = scenarios::PolicySpec{}.name;
  double gain = scenarios::PolicySpec{}.gain;
  std::int64_t fit_window = static_cast<std::int64_t>(scenarios::PolicySpec{}.fit_window);
  BatchSize min_batch = scenarios::PolicySpec{}.min_batch;
  BatchSize max_batch = scenarios::PolicySpec{}.max_batch;
  double dead_band = scenarios::PolicySpec{}.dead_band;
  double ewma_alpha = scenarios::PolicySpec{}.ewma_alpha;
  std::string decide = "every-n";  // "every-n", "every-epoch" or "imbalance" (scenario key `policy.decide`)
  std::int64_t every_n = scenarios::PolicySpec{}.every_n;
  double imbalance_threshold = scenarios::PolicySpec{}.imbalance_threshold;
  bool memory_guard = scenarios::PolicySpec{}.memory_guard;
  double memory_guard_tolerance = scenarios::PolicySpec{}.memory_guard_tolerance;
  BatchSize global_batch = scenarios::WorkloadSpec{}.global_batch;
  std::string mode = "bsp";        // "bsp" or "asp"
  std::vector<double> capacities;  // one nominal capacity (relative speed) per worker
};

// The scenario these settings stand for (mode, workload.global_batch, one node per capacity, policy), validated
// like the scenario parser validates a `policy:` mapping. Errors name the setting at fault.
Result<scenarios::Scenario> to_scenario(const ControllerSettings& settings);
// The settings of a parsed scenario (the inverse of to_scenario for the fields above).
ControllerSettings from_scenario(const scenarios::Scenario& scenario);
// A controller for the scenario, made by the run layer's factory (run::controller_spec, run::make_controller) as the
// simulator and the testbed make theirs.
Result<std::unique_ptr<controller::Controller>> make_controller(const scenarios::Scenario& scenario);

}  // namespace omnilearn::python
