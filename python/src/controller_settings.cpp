#include "controller_settings.h"

#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "omnilearn/run/controller_factory.h"
#include "omnilearn/scenarios/scenario_parser.h"

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
  if (s.capacities.empty()) return bad("capacities", "at least one worker is required");
  for (std::size_t k = 0; k < s.capacities.size(); ++k) {
    if (!(s.capacities[k] > 0.0) || !std::isfinite(s.capacities[k])) {
      return bad("capacities[" + std::to_string(k) + "]", "must be a positive number");
    }
  }
  // A scenario document (JSON is YAML) through the scenario parser: its rules for a `policy:` mapping, the mode and
  // the global batch are the only ones, and its messages name the key at fault.
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t k = 0; k < s.capacities.size(); ++k) {
    nodes.push_back({{"name", "worker" + std::to_string(k)}, {"speed", s.capacities[k]}});
  }
  const nlohmann::json doc = {
      {"mode", s.mode},
      {"cluster", {{"nodes", nodes}}},
      {"workload", {{"model", "resnet18"}, {"global_batch", s.global_batch}}},
      {"policy",
       {{"name", s.name}, {"gain", s.gain}, {"fit_window", s.fit_window}, {"min_batch", s.min_batch},
        {"max_batch", s.max_batch}, {"dead_band", s.dead_band}, {"ewma_alpha", s.ewma_alpha}, {"decide", s.decide},
        {"every_n", s.every_n}, {"imbalance_threshold", s.imbalance_threshold}, {"memory_guard", s.memory_guard},
        {"memory_guard_tolerance", s.memory_guard_tolerance}}}};
  return scenarios::parse_scenario(doc.dump(), "Controller settings");
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
