// AspSchedule: the replies the ASP server holds and lets go (SSP's bound, the epoch barrier of pull: per-epoch),
// on scripted pushes.
#include "omnilearn/run/asp_schedule.h"

#include <gtest/gtest.h>

#include <vector>

namespace omnilearn::run {
namespace {

scenarios::AspSpec ssp(std::int64_t bound) {
  scenarios::AspSpec s;
  s.rule = scenarios::AspRule::kSsp;
  s.staleness_bound = bound;
  return s;
}

const AspSchedule::LiveFn kAllLive = [](WorkerId) { return true; };

std::vector<WorkerId> push_and_release(AspSchedule& s, WorkerId k, bool epoch_ended = false,
                                       const AspSchedule::LiveFn& live = kAllLive) {
  s.pushed(k, epoch_ended);
  bool opened = false;
  return s.release(live, opened);
}

// The barrier's epoch count (workload.asp.epochs): floor counts an epoch at its end, ceil (the paper's server) at its
// first sample, so the first push already counts 1.
TEST(AspScheduleTest, BarrierEpochCountsByFloorOrCeil) {
  using scenarios::AspEpochs;
  EXPECT_EQ(barrier_epoch(AspEpochs::kFloor, 0, 100), 0);
  EXPECT_EQ(barrier_epoch(AspEpochs::kCeil, 0, 100), 0);
  EXPECT_EQ(barrier_epoch(AspEpochs::kFloor, 1, 100), 0);
  EXPECT_EQ(barrier_epoch(AspEpochs::kCeil, 1, 100), 1);
  EXPECT_EQ(barrier_epoch(AspEpochs::kFloor, 100, 100), 1);
  EXPECT_EQ(barrier_epoch(AspEpochs::kCeil, 100, 100), 1);
  EXPECT_EQ(barrier_epoch(AspEpochs::kFloor, 101, 100), 1);
  EXPECT_EQ(barrier_epoch(AspEpochs::kCeil, 101, 100), 2);
}

TEST(AspScheduleTest, TheDefaultsHoldNothing) {
  AspSchedule s(scenarios::AspSpec{}, 3);
  EXPECT_FALSE(s.holds());
  EXPECT_EQ(push_and_release(s, 1), std::vector<WorkerId>{1});
  EXPECT_EQ(push_and_release(s, 1, /*epoch_ended=*/true), std::vector<WorkerId>{1});
}

// s = 0: a synchronous round. A worker's reply goes once every worker has finished as many iterations as it has.
TEST(AspScheduleTest, SspZeroIsASynchronousRound) {
  AspSchedule s(ssp(0), 3);
  EXPECT_TRUE(s.holds());
  EXPECT_TRUE(push_and_release(s, 0).empty());  // 0 finished its iteration 0; 1 and 2 have not
  EXPECT_TRUE(push_and_release(s, 2).empty());
  EXPECT_EQ(push_and_release(s, 1), (std::vector<WorkerId>{0, 2, 1}));  // the round is complete, in the held order
  EXPECT_TRUE(push_and_release(s, 1).empty());  // 1 finished its iteration 1 first: it waits for 0 and 2
  EXPECT_TRUE(s.held(1));
}

// s = 1: the fastest may finish one iteration more than the slowest before it waits.
TEST(AspScheduleTest, SspBoundLetsAWorkerRunThatFarAhead) {
  AspSchedule s(ssp(1), 2);
  EXPECT_EQ(push_and_release(s, 0), std::vector<WorkerId>{0});  // 0 has finished 1, 1 has finished 0: 1 - 1 <= 0
  EXPECT_TRUE(push_and_release(s, 0).empty());                  // 2 - 1 > 0: it may not start its third
  EXPECT_EQ(push_and_release(s, 1), (std::vector<WorkerId>{0, 1}));
}

// A down worker holds nobody back; back up, it starts from the slowest live worker's count.
TEST(AspScheduleTest, SspIgnoresDownWorkersAndRaisesAReturningOne) {
  AspSchedule s(ssp(0), 3);
  bool up2 = true;
  const AspSchedule::LiveFn live = [&](WorkerId j) { return j != 2 || up2; };
  EXPECT_TRUE(push_and_release(s, 0, false, live).empty());
  up2 = false;
  EXPECT_EQ(push_and_release(s, 1, false, live), (std::vector<WorkerId>{0, 1}));
  EXPECT_EQ(push_and_release(s, 0, false, live).size(), 0u);
  EXPECT_EQ(push_and_release(s, 1, false, live), (std::vector<WorkerId>{0, 1}));
  up2 = true;
  s.rejoin(2, live);
  EXPECT_EQ(s.finished(2), 2);  // it does not hold 0 and 1 back for the two iterations it missed
  EXPECT_TRUE(push_and_release(s, 0, false, live).empty());
  EXPECT_TRUE(push_and_release(s, 2, false, live).empty());
  EXPECT_EQ(push_and_release(s, 1, false, live), (std::vector<WorkerId>{0, 2, 1}));
}

// pull: per-epoch: pushes before the boundary go at once; from the one that ends the epoch on, every reply waits
// until each live worker has pushed; then all go, and the barrier says it opened.
TEST(AspScheduleTest, PerEpochPullHoldsEveryReplyAtTheEpochsEnd) {
  scenarios::AspSpec spec;
  spec.pull = scenarios::AspPull::kPerEpoch;
  AspSchedule s(spec, 3);
  EXPECT_TRUE(s.holds());
  EXPECT_EQ(push_and_release(s, 0), std::vector<WorkerId>{0});
  EXPECT_TRUE(push_and_release(s, 1, /*epoch_ended=*/true).empty());
  EXPECT_TRUE(push_and_release(s, 0).empty());
  s.pushed(2, false);
  bool opened = false;
  EXPECT_EQ(s.release(kAllLive, opened), (std::vector<WorkerId>{1, 0, 2}));
  EXPECT_TRUE(opened);
  EXPECT_EQ(push_and_release(s, 2), std::vector<WorkerId>{2});  // a new epoch: no barrier until it ends
  // A down worker is not waited for.
  EXPECT_TRUE(push_and_release(s, 0, /*epoch_ended=*/true).empty());
  const AspSchedule::LiveFn two_down = [](WorkerId j) { return j != 2; };
  s.pushed(1, false);
  EXPECT_EQ(s.release(two_down, opened), (std::vector<WorkerId>{0, 1}));
  EXPECT_TRUE(opened);
}

TEST(AspScheduleTest, ReleaseAllEndsTheRun) {
  AspSchedule s(ssp(0), 2);
  EXPECT_TRUE(push_and_release(s, 1).empty());
  EXPECT_EQ(s.release_all(), std::vector<WorkerId>{1});
  EXPECT_FALSE(s.held(1));
}

}  // namespace
}  // namespace omnilearn::run
