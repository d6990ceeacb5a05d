#include "omnilearn/emulator/fake_throttler.h"

#include <string>

namespace omnilearn::emulator {

Status FakeThrottler::attach(WorkerId worker, pid_t pid) {
  if (worker >= fractions_.size()) return Status::invalid_argument("fake throttler: no worker " + std::to_string(worker));
  attached_.push_back(pid);
  return Status::ok();
}

Status FakeThrottler::apply(WorkerId worker, double fraction) {
  if (!fail_.is_ok()) return fail_;
  if (worker >= fractions_.size()) return Status::invalid_argument("fake throttler: no worker " + std::to_string(worker));
  if (!(fraction >= 0.0 && fraction <= 1.0)) return Status::invalid_argument("fake throttler: fraction out of [0, 1]");
  fractions_[worker] = fraction;
  calls_.push_back({worker, fraction});
  return Status::ok();
}

Status FakeThrottler::set_frozen(WorkerId worker, bool frozen) {
  if (worker >= fractions_.size()) return Status::invalid_argument("fake throttler: no worker " + std::to_string(worker));
  std::lock_guard lock(freeze_mu_);
  freezes_.push_back({worker, frozen, std::chrono::steady_clock::now()});
  return Status::ok();
}

std::vector<FakeThrottler::Freeze> FakeThrottler::freezes() const {
  std::lock_guard lock(freeze_mu_);
  return freezes_;
}

Status FakeThrottler::remove() {
  removed_ = true;
  return Status::ok();
}

}  // namespace omnilearn::emulator
