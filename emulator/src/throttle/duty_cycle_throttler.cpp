#include "omnilearn/emulator/duty_cycle_throttler.h"

#include <sys/resource.h>
#include <unistd.h>

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
    : inner_(std::move(inner)), period_s_(period_s), fractions_(workers), thawed_s_(workers) {
  for (auto& f : fractions_) f.store(1.0);
  for (auto& t : thawed_s_) t.store(0.0);
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

double DutyCycleThrottler::thawed_s(WorkerId worker) const {
  return worker < thawed_s_.size() ? thawed_s_[worker].load() : 0.0;
}

namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One worker's account in the cycle: the time it was thawed against the time its fraction owed it, both on the
// steady clock since its fraction last changed. Their difference is taken off (or added to) its next window.
struct Account {
  double fraction = 1.0;
  double owed_s = 0.0;    // the fraction times the wall time since the change
  double thawed_s = 0.0;  // the time thawed since the change
  // This period's window in seconds, in [0, period_s]; `f` is the fraction now asked for.
  double window(double f, double period_s) {
    if (f != fraction) *this = Account{f};
    if (f <= 0.0 || f >= 1.0) return f <= 0.0 ? 0.0 : period_s;  // always frozen, never frozen
    const double debt = std::clamp(thawed_s - owed_s, -period_s, period_s);
    return std::clamp(f * period_s - debt, 0.0, period_s);
  }
};

}  // namespace

// Each period: give each worker its window (its fraction of the period, less what it overran before), thaw the
// workers whose window is not empty, then freeze each one when its window ends, in order of window. A freezer
// error ends the cycle with everyone thawed (the run goes on at full speed; the error is reported at the next
// apply()).
void DutyCycleThrottler::run() {
  // The cycle keeps time only if this thread wakes on time. At the default priority, beside busy neighbours, it woke
  // late to freeze a worker just thawed (which the scheduler favours, as it slept), and a group held to 0.3 of each
  // period ran for half of it. The highest priority a nice value gives (root's, as the freezer needs) lets it take a
  // CPU when it wakes; it sleeps nearly all the time, so it takes almost none. Without the permission: as it is. What
  // lateness remains is paid back through each worker's Account.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), -20);
  const std::size_t n = fractions_.size();
  std::vector<bool> frozen(n, false);
  std::vector<Account> accounts(n);
  std::vector<Clock::time_point> since(n, Clock::now());  // when each thawed worker's time was last counted
  std::vector<std::size_t> order(n);
  auto count_thawed = [&](std::size_t k, Clock::time_point now) {
    if (frozen[k]) return;
    const double d = seconds(now - since[k]);
    accounts[k].thawed_s += d;
    thawed_s_[k].store(thawed_s_[k].load() + d);
    since[k] = now;
  };
  // A worker's thawed time runs from before the write that thaws it to after the write that freezes it: a worker
  // whose group outweighs this thread (cpu.shares) runs as soon as it is thawed, before this thread reads the clock.
  auto set = [&](std::size_t k, bool f) {
    if (frozen[k] == f) return true;
    const Clock::time_point before = Clock::now();
    Status s = inner_->set_frozen(static_cast<WorkerId>(k), f);
    if (!s.is_ok()) {
      std::lock_guard lock(mu_);
      if (cycle_status_.is_ok()) cycle_status_ = s.with_context("duty cycle");
      return false;
    }
    const Clock::time_point after = Clock::now();
    count_thawed(k, after);  // a freeze ends the thawed time
    frozen[k] = f;
    since[k] = f ? after : before;
    return true;
  };
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period_s_));
  Clock::time_point start = Clock::now();
  Clock::time_point last = start;
  std::vector<double> w(n);
  std::unique_lock lock(mu_);
  bool ok = true;
  while (!stop_ && ok) {
    lock.unlock();
    const Clock::time_point now = Clock::now();
    for (std::size_t k = 0; k < n; ++k) {
      count_thawed(k, now);
      accounts[k].owed_s += accounts[k].fraction * seconds(now - last);
      w[k] = accounts[k].window(fractions_[k].load(), period_s_);
    }
    last = now;
    for (std::size_t k = 0; k < n && ok; ++k) ok = set(k, w[k] <= 0.0);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return w[a] < w[b]; });
    lock.lock();
    for (std::size_t i = 0; i < n && ok && !stop_; ++i) {
      const std::size_t k = order[i];
      if (w[k] <= 0.0 || w[k] >= period_s_) continue;
      const auto at = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(w[k]));
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
