// TrainingProgress: counts the samples a run has processed, turns them into epochs and epoch times, decides when
// the run stops (epochs, sample budget, iteration cap) and reports the fraction done. Not thread-safe: owned by
// the actor that applies updates (BSP coordinator, ASP parameter server).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

class TrainingProgress {
 public:
  // `stop_requested` (may be empty) is polled by done(): once it returns true, the run is done and stopped().
  TrainingProgress(const scenarios::Scenario& scenario, std::function<void(double)> report,
                   std::function<bool()> stop_requested = {})
      : per_epoch_(std::max<std::int64_t>(scenario.workload.dataset_samples, 1)),
        epochs_(std::max<std::int64_t>(scenario.workload.epochs, 1)),
        budget_(scenario.workload.sample_budget),
        max_iterations_(scenario.max_iterations),
        report_(std::move(report)),
        stop_requested_(std::move(stop_requested)) {}

  // Adds the samples of one applied iteration (a BSP step or an ASP update) finished at `now_s`. Returns true
  // when this crossed an epoch boundary.
  bool add(std::int64_t samples, Seconds now_s) {
    samples_ += samples;
    ++iterations_;
    bool crossed = false;
    while (samples_ >= per_epoch_ * (epoch_ + 1)) {
      epoch_time_s_.push_back(now_s - epoch_start_s_);
      epoch_start_s_ = now_s;
      ++epoch_;
      crossed = true;
    }
    const double f = fraction();
    if (report_ && f >= reported_ + 0.01) {
      reported_ = f;
      report_(f);
    }
    return crossed;
  }

  bool done() {
    if (stopped_ || (stop_requested_ && stop_requested_())) {
      stopped_ = true;
      return true;
    }
    if (max_iterations_ > 0 && iterations_ >= max_iterations_) return true;
    if (budget_ > 0) return samples_ >= budget_;
    return epoch_ >= epochs_;
  }
  double fraction() const {
    double f = budget_ > 0 ? static_cast<double>(samples_) / static_cast<double>(budget_)
                           : static_cast<double>(samples_) / static_cast<double>(per_epoch_ * epochs_);
    if (max_iterations_ > 0) {
      f = std::max(f, static_cast<double>(iterations_) / static_cast<double>(max_iterations_));
    }
    return std::min(f, 1.0);
  }
  // True once stop_requested ended the run before its stop condition.
  bool stopped() const { return stopped_; }
  void finish() {
    if (report_ && !stopped_) report_(1.0);
  }

  std::int64_t epoch() const { return epoch_; }
  std::int64_t iterations() const { return iterations_; }
  std::int64_t samples() const { return samples_; }
  const std::vector<Seconds>& epoch_time_s() const { return epoch_time_s_; }

 private:
  std::int64_t per_epoch_;
  std::int64_t epochs_;
  std::int64_t budget_;
  std::int64_t max_iterations_;
  std::function<void(double)> report_;
  std::function<bool()> stop_requested_;
  bool stopped_ = false;
  std::int64_t samples_ = 0;
  std::int64_t iterations_ = 0;
  std::int64_t epoch_ = 0;
  Seconds epoch_start_s_ = 0.0;
  double reported_ = 0.0;
  std::vector<Seconds> epoch_time_s_;
};

}  // namespace omnilearn::sim
