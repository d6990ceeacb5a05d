#include "omnilearn/emulator/duty_cycle_throttler.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

namespace omnilearn::emulator {

using Clock = std::chrono::steady_clock;

Result<std::unique_ptr<DutyCycleThrottler>> DutyCycleThrottler::wrap(std::unique_ptr<FreezableThrottler> inner,
                                                                     std::size_t workers, double period_s) {
  if (!inner) return Status::invalid_argument("duty cycle: no throttler to wrap");
  if (workers == 0) return Status::invalid_argument("duty cycle: no workers");
  if (!(period_s >= 0.001 && period_s <= 10.0)) {
    return Status::invalid_argument("duty cycle: period " + std::to_string(period_s) + " s outside [1 ms, 10 s]");
  }
  // Check once, on worker 0, that the inner throttler can freeze (and leave it thawed).
  OMNI_RETURN_IF_ERROR(inner->set_frozen(0, false));
  return std::unique_ptr<DutyCycleThrottler>(new DutyCycleThrottler(std::move(inner), workers, period_s));
}

DutyCycleThrottler::DutyCycleThrottler(std::unique_ptr<FreezableThrottler> inner, std::size_t workers, double period_s)
    : inner_(std::move(inner)), period_s_(period_s), fractions_(workers) {
  for (auto& f : fractions_) f.store(1.0);
  thread_ = std::thread([this] { run(); });
}

DutyCycleThrottler::~DutyCycleThrottler() { (void)remove(); }

Status DutyCycleThrottler::apply(WorkerId worker, double fraction) {
  if (worker >= fractions_.size()) return Status::invalid_argument("duty cycle: no worker " + std::to_string(worker));
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    return Status::invalid_argument("duty cycle: fraction " + std::to_string(fraction) + " outside [0, 1]");
  }
  fractions_[worker].store(fraction);
  return cycle_status();
}

Status DutyCycleThrottler::cycle_status() const {
  std::lock_guard lock(mu_);
  return cycle_status_;
}

// Each period: thaw the workers that run at all, then freeze each one when its share of the period is used, in
// order of share. A freezer error ends the cycle with everyone thawed (the run goes on at full speed; the error
// is reported at the next apply()).
void DutyCycleThrottler::run() {
  const std::size_t n = fractions_.size();
  std::vector<bool> frozen(n, false);
  std::vector<std::size_t> order(n);
  auto set = [&](std::size_t k, bool f) {
    if (frozen[k] == f) return true;
    Status s = inner_->set_frozen(static_cast<WorkerId>(k), f);
    if (!s.is_ok()) {
      std::lock_guard lock(mu_);
      if (cycle_status_.is_ok()) cycle_status_ = s.with_context("duty cycle");
      return false;
    }
    frozen[k] = f;
    return true;
  };
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period_s_));
  Clock::time_point start = Clock::now();
  std::unique_lock lock(mu_);
  bool ok = true;
  while (!stop_ && ok) {
    lock.unlock();
    std::vector<double> f(n);
    for (std::size_t k = 0; k < n; ++k) f[k] = fractions_[k].load();
    for (std::size_t k = 0; k < n && ok; ++k) ok = set(k, f[k] <= 0.0);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return f[a] < f[b]; });
    lock.lock();
    for (std::size_t i = 0; i < n && ok && !stop_; ++i) {
      const std::size_t k = order[i];
      if (f[k] <= 0.0 || f[k] >= 1.0) continue;
      const auto at = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f[k] * period_s_));
      if (cv_.wait_until(lock, at, [&] { return stop_; })) break;
      lock.unlock();
      ok = set(k, true);
      lock.lock();
    }
    start += period;
    if (Clock::now() > start + period) start = Clock::now();  // fell behind (a stalled host): do not catch up
    cv_.wait_until(lock, start, [&] { return stop_; });
  }
  lock.unlock();
  for (std::size_t k = 0; k < n; ++k) {
    if (frozen[k]) (void)inner_->set_frozen(static_cast<WorkerId>(k), false);
  }
}

void DutyCycleThrottler::stop_cycle() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status DutyCycleThrottler::remove() {
  if (removed_) return Status::ok();
  removed_ = true;
  stop_cycle();
  return inner_->remove();
}

}  // namespace omnilearn::emulator
