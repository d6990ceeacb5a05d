#include "omnilearn/emulator/availability_replayer.h"

#include <algorithm>
#include <string>


namespace omnilearn::emulator {

Result<AvailabilityReplayer> AvailabilityReplayer::create(const run::AvailabilityPlan& plan) {
  const std::size_t n = plan.worker_count();
  AvailabilityReplayer r;
  r.initial_.resize(n);
  for (std::size_t k = 0; k < n; ++k) r.initial_[k] = plan.initial(static_cast<WorkerId>(k));
  if (!plan.epoch_phases().empty()) {
    if (plan.timed()) {
      return Status::invalid_argument("availability.noise: the testbed cannot combine noise with an epoch schedule");
    }
    for (const scenarios::AvailabilityPhase& phase : plan.epoch_phases()) {
      if (phase.at <= 0.0) continue;  // in initial_
      for (std::size_t k = 0; k < n; ++k) {
        r.events_.push_back({0.0, static_cast<std::int64_t>(phase.at), static_cast<WorkerId>(k), phase.fractions[k]});
      }
    }
  } else if (const auto& trace = plan.timed()) {
    // Unroll loops up to a generous horizon: runs on the testbed last minutes, not days.
    constexpr Seconds kHorizon = 7.0 * 24 * 3600;
    const Seconds end = trace->loop_after_s() ? kHorizon : trace->duration() + 1.0;
    for (std::size_t k = 0; k < n; ++k) {
      const auto w = static_cast<WorkerId>(k);
      for (const Seconds t : trace->change_times_in(w, 0.0, end)) {
        if (t > 0.0) r.events_.push_back({t, -1, w, trace->fraction_at(w, t)});
      }
    }
    std::stable_sort(r.events_.begin(), r.events_.end(),
                     [](const AvailabilityEvent& a, const AvailabilityEvent& b) { return a.time_s < b.time_s; });
  }
  r.current_ = r.initial_;
  return r;
}

std::vector<AvailabilityEvent> AvailabilityReplayer::take_due(Seconds now_s, std::int64_t epoch) {
  std::vector<AvailabilityEvent> due;
  while (next_ < events_.size()) {
    const AvailabilityEvent& e = events_[next_];
    const bool is_due = e.epoch >= 0 ? e.epoch <= epoch : e.time_s <= now_s;
    if (!is_due) break;
    if (current_[e.worker] != e.fraction) {
      current_[e.worker] = e.fraction;
      due.push_back(e);
    }
    ++next_;
  }
  return due;
}

std::optional<Seconds> AvailabilityReplayer::next_time() const {
  if (next_ >= events_.size() || events_[next_].epoch >= 0) return std::nullopt;
  return events_[next_].time_s;
}

}  // namespace omnilearn::emulator
