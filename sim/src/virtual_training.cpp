#include "virtual_training.h"

#include <utility>

namespace omnilearn::sim {

VirtualTraining::VirtualTraining(const scenarios::Scenario& scenario, std::unique_ptr<TrainingNumerics> numerics,
                                 run::RunRecorder& recorder, run::StopRule& stop)
    : settings_(scenario.emulator),
      bsp_(scenario.mode == controller::TrainingMode::kBsp),
      numerics_(std::move(numerics)),
      recorder_(recorder),
      stop_(stop) {}

std::vector<std::optional<BatchOutcome>> VirtualTraining::bsp_step(std::span<const BatchSize> batch,
                                                                   const std::vector<bool>& lost) {
  if (!status_.is_ok()) return {};
  auto out = numerics_->bsp_step(batch, lost);
  if (!out) {
    status_ = out.status();
    return {};
  }
  return std::move(out).value();
}

std::optional<BatchOutcome> VirtualTraining::asp_push(WorkerId k, BatchSize batch, std::int64_t staleness,
                                                      Seconds compute_s) {
  if (!status_.is_ok()) return std::nullopt;
  auto out = numerics_->asp_push(k, batch, staleness, compute_s);
  if (!out) {
    status_ = out.status();
    return std::nullopt;
  }
  return *out;
}

void VirtualTraining::after_update(std::int64_t updates, std::int64_t epoch, bool epoch_ended, Seconds now_s) {
  // The drivers stop after the update on which the time or the target ends the run, so neither has fired yet; the
  // epochs or the step cap may have, on this very update, which is still evaluated when due.
  if (!status_.is_ok()) return;
  // As the testbed's server: no evaluation at the update that spent the time budget but the final one.
  if (stop_.elapsed(now_s) == run::StopReason::kTime) return;
  const bool due = settings_.eval_every > 0 ? updates % settings_.eval_every == 0 : epoch_ended;
  if (due && updates != last_evaluated_) evaluate(updates, epoch, now_s);
}

void VirtualTraining::evaluate(std::int64_t updates, std::int64_t epoch, Seconds now_s) {
  auto ev = numerics_->evaluate();
  if (!ev) {
    status_ = ev.status();
    return;
  }
  recorder_.evaluation(run::EvaluationRecord{now_s, bsp_ ? updates - 1 : updates, epoch, ev->loss, ev->accuracy});
  last_evaluated_ = updates;
  if (stop_.evaluation(ev->accuracy) == run::StopReason::kTarget && !time_to_target_s_) {
    time_to_target_s_ = now_s;  // simulated seconds; evaluations take no simulated time
    steps_to_target_ = updates;
  }
}

void VirtualTraining::finish(std::int64_t updates, std::int64_t epoch, Seconds now_s) {
  if (status_.is_ok() && updates > 0 && last_evaluated_ != updates) evaluate(updates, epoch, now_s);
}

void VirtualTraining::fill(run::RunSummary& summary) const {
  if (time_to_target_s_) summary.time_to_target_s = *time_to_target_s_;
  if (steps_to_target_ >= 0) summary.extra["steps_to_target"] = static_cast<double>(steps_to_target_);
  summary.extra["parameters"] = static_cast<double>(numerics_->parameters());
  if (!bsp_) summary.extra["numerics_peak_versions"] = static_cast<double>(numerics_->peak_versions());
  summary.extra["stopped_at_target"] = stop_.reason() == run::StopReason::kTarget ? 1.0 : 0.0;
}

}  // namespace omnilearn::sim
