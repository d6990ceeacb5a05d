// The freezer duty cycle over a recording throttler: who is frozen, and for what part of each period.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "omnilearn/emulator/duty_cycle_throttler.h"
#include "omnilearn/emulator/fake_throttler.h"

namespace omnilearn::emulator {
namespace {

using Clock = std::chrono::steady_clock;

// The part of [from, to) that `worker` spent frozen, from the recorded freezer writes.
double frozen_fraction(const std::vector<FakeThrottler::Freeze>& log, WorkerId worker, Clock::time_point from,
                       Clock::time_point to) {
  bool frozen = false;
  Clock::time_point since = from;
  double total = 0.0;
  for (const auto& f : log) {
    if (f.worker != worker) continue;
    if (f.at < from) {  // the state at `from`
      frozen = f.frozen;
      continue;
    }
    if (f.at >= to) break;
    if (frozen && !f.frozen) total += std::chrono::duration<double>(f.at - since).count();
    if (!frozen && f.frozen) since = f.at;
    frozen = f.frozen;
  }
  if (frozen) total += std::chrono::duration<double>(to - since).count();
  return total / std::chrono::duration<double>(to - from).count();
}

TEST(DutyCycle, RunsEachWorkerItsShareOfEveryPeriod) {
  auto fake = std::make_unique<FakeThrottler>(3);
  FakeThrottler* rec = fake.get();
  auto d = DutyCycleThrottler::wrap(std::move(fake), 3, 0.020);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  DutyCycleThrottler& t = **d;
  ASSERT_TRUE(t.apply(0, 0.0).is_ok());
  ASSERT_TRUE(t.apply(1, 0.5).is_ok());
  ASSERT_TRUE(t.apply(2, 1.0).is_ok());
  EXPECT_FALSE(t.apply(3, 0.5).is_ok());
  EXPECT_FALSE(t.apply(1, 1.5).is_ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // the cycle picks the shares up
  const auto from = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto to = Clock::now();
  ASSERT_TRUE(t.remove().is_ok());
  EXPECT_TRUE(rec->removed());
  const auto log = rec->freezes();

  EXPECT_GT(frozen_fraction(log, 0, from, to), 0.99);  // down: frozen throughout
  const double half = frozen_fraction(log, 1, from, to);
  EXPECT_GT(half, 0.3) << "worker at 0.5 was frozen for " << half << " of the time";
  EXPECT_LT(half, 0.7) << "worker at 0.5 was frozen for " << half << " of the time";
  int cycles = 0;
  for (const auto& f : log) {
    EXPECT_FALSE(f.worker == 2 && f.frozen) << "a worker at 1.0 was frozen";
    cycles += f.worker == 1 && f.frozen && f.at >= from && f.at < to;
  }
  EXPECT_GE(cycles, 15);  // about one freeze per 20 ms period over 600 ms
  // Everyone is thawed once the cycle stops.
  for (WorkerId k = 0; k < 2; ++k) {
    bool last = true;
    for (const auto& f : log) {
      if (f.worker == k) last = f.frozen;
    }
    EXPECT_FALSE(last) << "worker " << k << " left frozen";
  }
}

// A throttler whose freezer fails (not mounted, no permission) is refused before any cycle starts.
TEST(DutyCycle, NeedsAThrottlerThatCanFreeze) {
  class NoFreeze final : public FreezableThrottler {
   public:
    Status attach(WorkerId, pid_t) override { return Status::ok(); }
    Status apply(WorkerId, double) override { return Status::ok(); }
    Status remove() override { return Status::ok(); }
    Status set_frozen(WorkerId, bool) override { return Status::not_found("no freezer here"); }
  };
  auto d = DutyCycleThrottler::wrap(std::make_unique<NoFreeze>(), 1, 0.1);
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("no freezer here"), std::string::npos) << d.status().message();
  EXPECT_FALSE(DutyCycleThrottler::wrap(std::make_unique<FakeThrottler>(1), 1, 0.0).is_ok());
  EXPECT_FALSE(DutyCycleThrottler::wrap(std::make_unique<FakeThrottler>(1), 0, 0.1).is_ok());
}

}  // namespace
}  // namespace omnilearn::emulator
