// DutyCycleThrottler: live availability for workers whose share cannot change while they run (a CUDA MPS
// active-thread percentage is fixed when the client connects). It wraps a throttler that can freeze workers
// (the cgroup freezer) and, each period P, lets worker k run for f_k * P and keeps it frozen for the rest:
// f = 1 is never frozen, f = 0 always; time a window overran (its thread woke late) is taken off the next ones, so
// the share holds over time on a busy host. Its own thread drives the freezer; the inner throttler's limits (CPU
// quota, MPS percentage) stay as they were set at start.
//
// Limits (README, "GPU"): the granularity is P (100 ms by default): a step shorter than P sees either full speed
// or a pause; work a frozen process already queued on the GPU runs on; a frozen worker keeps its GPU memory.
// Thread-safe for one launcher thread plus the cycle's own.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "omnilearn/emulator/resource_throttler.h"

namespace omnilearn::emulator {

class DutyCycleThrottler final : public ResourceThrottler {
 public:
  // Drives `inner`'s `workers` groups (inner local ids 0..workers-1); `period_s` in [1 ms, 10 s]. Checks once, on
  // worker 0, that `inner` can freeze.
  static Result<std::unique_ptr<DutyCycleThrottler>> wrap(std::unique_ptr<FreezableThrottler> inner,
                                                          std::size_t workers, double period_s);
  ~DutyCycleThrottler() override;
  DutyCycleThrottler(const DutyCycleThrottler&) = delete;
  DutyCycleThrottler& operator=(const DutyCycleThrottler&) = delete;

  Status attach(WorkerId worker, pid_t pid) override { return inner_->attach(worker, pid); }
  // Sets the fraction of each period that `worker` runs; the cycle picks it up at its next period.
  Status apply(WorkerId worker, double fraction) override;
  // Stops the cycle, thaws every worker, then removes the inner groups.
  Status remove() override;
  // The first freezer error the cycle met (it stops cycling then and leaves everyone thawed); ok otherwise.
  Status cycle_status() const;
  // Seconds `worker` has been thawed since wrap(), as the cycle measured it (thaw to freeze, on the steady clock);
  // 0 for a worker out of range. The cycle holds this to the fraction over time: a window that ran long because its
  // thread woke late (a busy host) is paid back by shortening the worker's next windows.
  double thawed_s(WorkerId worker) const;

 private:
  DutyCycleThrottler(std::unique_ptr<FreezableThrottler> inner, std::size_t workers, double period_s);
  void run();
  void stop_cycle();

  std::unique_ptr<FreezableThrottler> inner_;
  double period_s_;
  std::vector<std::atomic<double>> fractions_;
  std::vector<std::atomic<double>> thawed_s_;  // written by the cycle, read by anyone
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool removed_ = false;
  Status cycle_status_;
  std::thread thread_;
};

}  // namespace omnilearn::emulator
