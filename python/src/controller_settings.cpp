#include "controller_settings.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/run/controller_factory.h"

namespace omnilearn::python {
namespace {

Status bad(const std::string& field, const std::string& what) { return Status::invalid_argument(field + ": " + what); }

const char* decide_text(controller::DecisionTrigger t) {
  switch (t) {
    case controller::DecisionTrigger::kEveryNIterations:
      return "every-n";
    case controller::DecisionTrigger::kEveryEpoch:
      return "every-epoch";
    case controller::DecisionTrigger::kImbalance:
      return "imbalance";
  }
  return "?";
}

}  // namespace

Result<scenarios::Scenario> to_scenario(const ControllerSettings& s) {
  scenarios::Scenario sc;
  if (s.mode == "bsp") {
    sc.mode = controller::TrainingMode::kBsp;
  } else if (s.mode == "asp") {
    sc.mode = controller::TrainingMode::kAsp;
  } else {
    return bad("mode", "expected 'bsp' or 'asp', got '" + s.mode + "'");
  }
  // The scenario parser's rules for a `policy:` mapping (scenarios/src/scenario_parser.cpp, parse_policy).
  const std::vector<std::string> known = controller::make_default_registry().names();
  if (std::find(known.begin(), known.end(), s.name) == known.end()) {
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    return bad("name", "unknown policy '" + s.name + "' (expected one of: " + list + ")");
  }
  sc.policy.name = s.name;
  if (sc.mode == controller::TrainingMode::kAsp && s.name == "omnilearn") sc.policy.name = "omnilearn-asp";
  if (sc.mode == controller::TrainingMode::kBsp && s.name == "omnilearn-asp") {
    return bad("name", "'omnilearn-asp' does not conserve the global batch: in bsp mode use 'omnilearn'");
  }
  if (s.min_batch < 1) return bad("min_batch", "must be >= 1, got " + std::to_string(s.min_batch));
  if (s.max_batch < s.min_batch) {
    return bad("max_batch", "expected min_batch <= max_batch, got " + std::to_string(s.min_batch) + " > " +
                                std::to_string(s.max_batch));
  }
  if (!(s.dead_band >= 0.0)) return bad("dead_band", "must be >= 0");
  if (!(s.ewma_alpha > 0.0 && s.ewma_alpha <= 1.0)) return bad("ewma_alpha", "must be in (0, 1]");
  if (s.decide == "every-n") {
    sc.policy.trigger = controller::DecisionTrigger::kEveryNIterations;
  } else if (s.decide == "every-epoch") {
    sc.policy.trigger = controller::DecisionTrigger::kEveryEpoch;
  } else if (s.decide == "imbalance") {
    sc.policy.trigger = controller::DecisionTrigger::kImbalance;
  } else {
    return bad("decide", "expected 'every-n', 'every-epoch' or 'imbalance', got '" + s.decide + "'");
  }
  if (s.every_n < 1) return bad("every_n", "must be >= 1, got " + std::to_string(s.every_n));
  if (!(s.imbalance_threshold > 0.0)) return bad("imbalance_threshold", "must be > 0");
  if (!(s.gain > 0.0) || !std::isfinite(s.gain)) return bad("gain", "must be a positive number");
  if (s.fit_window < 2) return bad("fit_window", "must be an integer >= 2 (points for a line fit)");
  if (!(s.memory_guard_tolerance >= 0.0 && s.memory_guard_tolerance < 1.0)) {
    return bad("memory_guard_tolerance", "must be in [0, 1)");
  }
  if (s.global_batch < 1) return bad("global_batch", "must be >= 1, got " + std::to_string(s.global_batch));
  if (s.capacities.empty()) return bad("capacities", "at least one worker is required");
  for (std::size_t k = 0; k < s.capacities.size(); ++k) {
    if (!(s.capacities[k] > 0.0) || !std::isfinite(s.capacities[k])) {
      return bad("capacities[" + std::to_string(k) + "]", "must be a positive number");
    }
  }
  sc.policy.gain = s.gain;
  sc.policy.fit_window = static_cast<std::size_t>(s.fit_window);
  sc.policy.min_batch = s.min_batch;
  sc.policy.max_batch = s.max_batch;
  sc.policy.dead_band = s.dead_band;
  sc.policy.ewma_alpha = s.ewma_alpha;
  sc.policy.every_n = s.every_n;
  sc.policy.imbalance_threshold = s.imbalance_threshold;
  sc.policy.memory_guard = s.memory_guard;
  sc.policy.memory_guard_tolerance = s.memory_guard_tolerance;
  sc.workload.global_batch = s.global_batch;
  for (std::size_t k = 0; k < s.capacities.size(); ++k) {
    scenarios::NodeSpec node;
    node.name = "worker" + std::to_string(k);
    node.speed_flops = s.capacities[k];
    sc.cluster.workers.push_back(node);
  }
  return sc;
}

ControllerSettings from_scenario(const scenarios::Scenario& sc) {
  ControllerSettings s;
  s.name = sc.policy.name;
  s.gain = sc.policy.gain;
  s.fit_window = static_cast<std::int64_t>(sc.policy.fit_window);
  s.min_batch = sc.policy.min_batch;
  s.max_batch = sc.policy.max_batch;
  s.dead_band = sc.policy.dead_band;
  s.ewma_alpha = sc.policy.ewma_alpha;
  s.decide = decide_text(sc.policy.trigger);
  s.every_n = sc.policy.every_n;
  s.imbalance_threshold = sc.policy.imbalance_threshold;
  s.memory_guard = sc.policy.memory_guard;
  s.memory_guard_tolerance = sc.policy.memory_guard_tolerance;
  s.global_batch = sc.workload.global_batch;
  s.mode = sc.mode == controller::TrainingMode::kAsp ? "asp" : "bsp";
  for (const scenarios::NodeSpec& node : sc.cluster.workers) s.capacities.push_back(node.speed_flops);
  return s;
}

Result<std::unique_ptr<controller::Controller>> make_controller(const scenarios::Scenario& scenario) {
  auto ctl = run::make_controller(run::controller_spec(scenario));
  if (!ctl) return ctl.status();
  return std::make_unique<controller::Controller>(std::move(ctl).value());
}

}  // namespace omnilearn::python
