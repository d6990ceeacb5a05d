// The hybrid model against Sailor's measured GH200 plans (traces/devices/sailor-gh200-plans.csv): each plan built
// as a HybridPlan on its nodes of GH-96, costed with Sailor's measured layer profiles and its fitted network
// (traces/devices/sailor-network.csv, gradients' all-reduce at its chunk size), one step simulated and set beside the
// measured iteration time. A plan the model refuses (its layers do not cover the model) is reported, not predicted.
// Pure function: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/layer_costs.h"
#include "omnilearn/traces/sailor_plans.h"

namespace omnilearn::hybrid {

struct PlanCheck {
  traces::SailorPlan plan;
  Seconds predicted_s = 0.0;
  double error = 0.0;              // predicted / measured - 1
  double predicted_memory_bytes = 0.0;  // the most any device holds (weights, optimizer state, activations)
  std::string refused;             // why the model refused the plan; empty when predicted
};

Result<std::vector<PlanCheck>> check_sailor_plans(const std::vector<traces::SailorPlan>& plans,
                                                  const traces::LayerCostTable& costs,
                                                  const traces::SailorNetwork& network,
                                                  const std::vector<traces::SailorKind>& kinds);

}  // namespace omnilearn::hybrid
