#include "omnilearn/run/stop_rule.h"

#include <algorithm>
#include <array>
#include <string>

namespace omnilearn::run {
namespace {

// The one name table, in enum order.
constexpr std::array<std::string_view, 7> kNames{"none", "epochs", "samples", "steps", "time", "target", "requested"};
static_assert(kNames.size() == static_cast<std::size_t>(StopReason::kRequested) + 1);

}  // namespace

std::string_view to_string(StopReason reason) { return kNames.at(static_cast<std::size_t>(reason)); }

std::optional<StopReason> parse_stop_reason(std::string_view name) {
  const auto it = std::find(kNames.begin(), kNames.end(), name);
  if (it == kNames.end()) return std::nullopt;
  return static_cast<StopReason>(it - kNames.begin());
}

std::optional<StopReason> stop_reason_from_code(std::int64_t code) {
  if (code < 0 || code >= static_cast<std::int64_t>(kNames.size())) return std::nullopt;
  return static_cast<StopReason>(code);
}

StopLimits stop_limits(const scenarios::Scenario& scenario) {
  StopLimits l;
  l.dataset_samples = scenario.workload.dataset_samples;
  l.epochs = scenario.workload.epochs;
  l.sample_budget = scenario.workload.sample_budget;
  l.max_steps = scenario.max_iterations;
  l.time_budget_s = scenario.emulator.time_budget_s;
  l.target_accuracy = scenario.emulator.target_accuracy;
  return l;
}

void set_stop_limits(scenarios::Scenario& scenario, const StopLimits& limits) {
  scenario.workload.dataset_samples = limits.dataset_samples;
  scenario.workload.epochs = limits.epochs;
  scenario.workload.sample_budget = limits.sample_budget;
  scenario.max_iterations = limits.max_steps;
  scenario.emulator.time_budget_s = limits.time_budget_s;
  scenario.emulator.target_accuracy = limits.target_accuracy;
}

Status check_stop_limits(const StopLimits& l) {
  auto bad = [](const std::string& what) { return Status::invalid_argument(what); };
  if (l.dataset_samples < 1) return bad("dataset_samples: expected >= 1, got " + std::to_string(l.dataset_samples));
  if (l.epochs < 1) return bad("epochs: expected >= 1, got " + std::to_string(l.epochs));
  if (l.sample_budget < 0) {
    return bad("sample_budget: expected >= 0 (0: train `epochs` epochs), got " + std::to_string(l.sample_budget));
  }
  if (l.max_steps < 0) return bad("max_steps: expected >= 0 (0: no limit), got " + std::to_string(l.max_steps));
  if (!(l.time_budget_s >= 0.0)) {  // NaN too
    return bad("time_budget_s: expected >= 0 (0: none), got " + std::to_string(l.time_budget_s));
  }
  if (!(l.target_accuracy >= 0.0 && l.target_accuracy <= 1.0)) {
    return bad("target_accuracy: expected in [0, 1] (0: none), got " + std::to_string(l.target_accuracy));
  }
  return Status::ok();
}

std::int64_t StopRule::sample_limit() const {
  if (limits_.sample_budget > 0) return limits_.sample_budget;
  return std::max<std::int64_t>(limits_.epochs, 1) * std::max<std::int64_t>(limits_.dataset_samples, 1);
}

StopReason StopRule::progress(std::int64_t steps, std::int64_t samples) {
  if (limits_.max_steps > 0 && steps >= limits_.max_steps) return fire(StopReason::kSteps);
  if (samples >= sample_limit()) return fire(limits_.sample_budget > 0 ? StopReason::kSamples : StopReason::kEpochs);
  return StopReason::kNone;
}

StopReason StopRule::elapsed(Seconds training_s) {
  if (limits_.time_budget_s > 0.0 && training_s >= limits_.time_budget_s) return fire(StopReason::kTime);
  return StopReason::kNone;
}

StopReason StopRule::evaluation(double accuracy) {
  if (limits_.target_accuracy > 0.0 && accuracy >= limits_.target_accuracy) return fire(StopReason::kTarget);
  return StopReason::kNone;
}

StopReason StopRule::fire(StopReason reason) {
  reason_ = std::max(reason_, reason);
  return reason;
}

}  // namespace omnilearn::run
