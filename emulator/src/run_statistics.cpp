#include "run_statistics.h"

#include <algorithm>

namespace omnilearn::emulator::detail {

void RunStatistics::add(const scenarios::IterationRecord& r) {
  max_step_ = std::max(max_step_, r.step);
  max_epoch_ = std::max(max_epoch_, r.epoch);
  if (r.epoch >= 0) {
    const auto e = static_cast<std::size_t>(r.epoch);
    if (epoch_start_.size() <= e) epoch_start_.resize(e + 1, -1.0);
    if (epoch_start_[e] < 0.0 || r.start_s < epoch_start_[e]) epoch_start_[e] = r.start_s;
  }
  const Seconds step = r.compute_s + r.comm_s + r.wait_s;
  last_end_s_ = std::max(last_end_s_, r.start_s + step);
  compute_s_ += r.compute_s, comm_s_ += r.comm_s, wait_s_ += r.wait_s;
  if (r.worker == 0) step_time_sum_ += step, ++steps_of_0_;
  if (r.staleness) {
    staleness_sum_ += static_cast<double>(*r.staleness);
    ++staleness_count_;
    max_staleness_ = std::max(max_staleness_, *r.staleness);
  }
}

void RunStatistics::add(const scenarios::PlanRecord& r) {
  ++decisions_;
  if (r.changed) ++changes_;
}

void RunStatistics::add(const scenarios::EvaluationRecord& r) { final_accuracy_ = r.accuracy; }

scenarios::RunSummary RunStatistics::summary(const scenarios::Scenario& scenario, Seconds wall_s) const {
  scenarios::RunSummary s;
  s.policy = scenario.policy.name;
  s.mode = scenario.mode == controller::TrainingMode::kBsp ? "bsp" : "asp";
  s.workers = static_cast<std::int64_t>(workers_);
  s.iterations = max_step_ + 1;
  s.epochs = max_epoch_ + 1;
  // Times count from the start of training (rank 0 reports it), not from the launch.
  const auto start = extra.find("training_start_s");
  s.total_time_s = last_end_s_ - (start != extra.end() ? start->second : 0.0);
  s.mean_iteration_s = steps_of_0_ > 0 ? step_time_sum_ / static_cast<double>(steps_of_0_) : 0.0;
  const double busy = compute_s_ + comm_s_ + wait_s_;
  s.idle_fraction = busy > 0.0 ? wait_s_ / busy : 0.0;
  for (std::size_t e = 0; e < epoch_start_.size(); ++e) {
    const Seconds end = e + 1 < epoch_start_.size() ? epoch_start_[e + 1] : last_end_s_;
    s.epoch_time_s.push_back(std::max(0.0, end - epoch_start_[e]));
  }
  s.final_accuracy = final_accuracy_;
  if (const auto it = extra.find("time_to_target_s"); it != extra.end() && it->second >= 0.0) s.time_to_target_s = it->second;
  if (staleness_count_ > 0) {
    s.mean_staleness = staleness_sum_ / static_cast<double>(staleness_count_);
    s.max_staleness = max_staleness_;
  }
  s.decisions = decisions_;
  s.batch_changes = changes_;
  s.extra = extra;
  s.extra.erase("time_to_target_s");
  s.extra["wall_time_s"] = wall_s;
  return s;
}

}  // namespace omnilearn::emulator::detail
