// FakeThrottler: a ResourceThrottler that records calls instead of touching the OS, for tests of the launcher
// and the availability replay. Can be told to fail. Not thread-safe, except set_frozen()/freezes(), which a duty
// cycle's thread may call.
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

#include "omnilearn/emulator/resource_throttler.h"

namespace omnilearn::emulator {

class FakeThrottler final : public FreezableThrottler {
 public:
  struct Call {
    WorkerId worker = 0;
    double fraction = 1.0;
  };
  explicit FakeThrottler(std::size_t workers) : fractions_(workers, 1.0) {}

  Status attach(WorkerId worker, pid_t pid) override;
  Status apply(WorkerId worker, double fraction) override;
  Status remove() override;
  Status set_frozen(WorkerId worker, bool frozen) override;

  struct Freeze {
    WorkerId worker = 0;
    bool frozen = false;
    std::chrono::steady_clock::time_point at;
  };
  std::vector<Freeze> freezes() const;

  // Makes the next apply() (and every later one) fail with `status`.
  void fail_with(Status status) { fail_ = std::move(status); }
  const std::vector<Call>& calls() const { return calls_; }
  const std::vector<double>& fractions() const { return fractions_; }
  const std::vector<pid_t>& attached() const { return attached_; }
  bool removed() const { return removed_; }

 private:
  std::vector<double> fractions_;
  std::vector<Call> calls_;
  std::vector<pid_t> attached_;
  bool removed_ = false;
  Status fail_;
  mutable std::mutex freeze_mu_;
  std::vector<Freeze> freezes_;
};

}  // namespace omnilearn::emulator
