// TrainingProgress: counts the samples a run has processed, turns them into epochs and epoch times, feeds the run's
// stop rule (run::StopRule: epochs, sample budget, iteration cap) and reports the fraction done. Not thread-safe: owned
// by the actor that applies updates (BSP coordinator, ASP parameter server).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/run/stop_rule.h"

namespace omnilearn::sim {

class TrainingProgress {
 public:
  // `stop` (the run's one rule, which must outlive this) gives the epoch size and the limits. `stop_requested` (may be
  // empty) is polled by done(): once it returns true, the run is done for StopReason::kRequested.
  TrainingProgress(run::StopRule& stop, std::function<void(double)> report, std::function<bool()> stop_requested = {})
      : stop_(stop),
        per_epoch_(std::max<std::int64_t>(stop.limits().dataset_samples, 1)),
        report_(std::move(report)),
        stop_requested_(std::move(stop_requested)) {}

  // Adds the samples of one applied iteration (a BSP step or an ASP update) finished at `now_s`, and tells the stop
  // rule. Returns true when this crossed an epoch boundary.
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
    stop_.progress(iterations_, samples_);
    const double f = fraction();
    if (report_ && f >= reported_ + 0.01) {
      reported_ = f;
      report_(f);
    }
    return crossed;
  }

  // Whether the stop rule says stop (for any reason: virtual-time training feeds it the time and the target too).
  bool done() {
    if (stop_requested_ && stop_requested_()) stop_.stop(run::StopReason::kRequested);
    return stop_.stopped();
  }
  double fraction() const {
    const run::StopLimits& limits = stop_.limits();
    double f = static_cast<double>(samples_) / static_cast<double>(stop_.sample_limit());
    if (limits.max_steps > 0) {
      f = std::max(f, static_cast<double>(iterations_) / static_cast<double>(limits.max_steps));
    }
    return std::min(f, 1.0);
  }
  // True once stop_requested ended the run.
  bool stopped() const { return stop_.reason() == run::StopReason::kRequested; }
  void finish() {
    if (report_ && !stopped()) report_(1.0);
  }

  std::int64_t epoch() const { return epoch_; }
  std::int64_t iterations() const { return iterations_; }
  std::int64_t samples() const { return samples_; }
  const std::vector<Seconds>& epoch_time_s() const { return epoch_time_s_; }

 private:
  run::StopRule& stop_;
  std::int64_t per_epoch_;
  std::function<void(double)> report_;
  std::function<bool()> stop_requested_;
  std::int64_t samples_ = 0;
  std::int64_t iterations_ = 0;
  std::int64_t epoch_ = 0;
  Seconds epoch_start_s_ = 0.0;
  double reported_ = 0.0;
  std::vector<Seconds> epoch_time_s_;
};

}  // namespace omnilearn::sim
