// The staleness-bounded batch policy (controller/policies.h, docs/asp-rules.md): each live worker at b_ref unless its
// push would arrive more than R updates stale, then the largest batch within R. The expected staleness of worker k is
// τ_k = c_k b_k Σ_{j≠k} 1 / (c_j b_j), c the seconds per sample; each expected plan is worked out in its comment.
#include <cmath>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "omnilearn/controller/policy_registry.h"

namespace omnilearn::controller {
namespace {

// τ_k of every live worker (per_sample_s > 0) under `b`.
std::vector<double> expected_staleness(const std::vector<double>& c, const std::vector<BatchSize>& b) {
  double total = 0.0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    if (b[k] > 0) total += 1.0 / (c[k] * static_cast<double>(b[k]));
  }
  std::vector<double> tau(c.size(), 0.0);
  for (std::size_t k = 0; k < c.size(); ++k) {
    if (b[k] > 0) tau[k] = c[k] * static_cast<double>(b[k]) * (total - 1.0 / (c[k] * static_cast<double>(b[k])));
  }
  return tau;
}

// Every live worker's push arrives within the bound, unless its batch is at its lower end.
void expect_within(const std::vector<double>& c, const std::vector<BatchSize>& lo, const std::vector<BatchSize>& b,
                   double bound) {
  const auto tau = expected_staleness(c, b);
  for (std::size_t k = 0; k < c.size(); ++k) {
    if (b[k] > lo[k]) {
      EXPECT_LE(tau[k], bound + 1e-9) << "worker " << k;
    }
  }
}

TEST(StalenessBoundedPlan, HeterogeneousWorkersGetTheLargestBatchWithinTheBound) {
  // The testbed's HL8 split, 6/6/4/32 cores: c_k = 1 / cores. At b_ref = 32 the 4-core worker takes t = 32/4 = 8
  // while the others push at 6/32 + 6/32 + 32/32 = 1.375 per unit of time: τ = 8 x 1.375 = 11 > R = 3.
  // The fixed point: every worker at one compute time, t = 1 (b_k = cores_k: 6, 6, 4, 32), τ_k = 3 for all.
  const std::vector<double> c{1.0 / 6, 1.0 / 6, 1.0 / 4, 1.0 / 32};
  const std::vector<BatchSize> lo(4, 1), hi(4, 96);
  const auto b = staleness_bounded_plan(c, lo, hi, /*b_ref=*/32, /*bound=*/3.0);
  EXPECT_EQ(b, (std::vector<BatchSize>{6, 6, 4, 32}));
  expect_within(c, lo, b, 3.0);
}

TEST(StalenessBoundedPlan, SixtyFourWorkersAtRNKeepTheFastOnesAtBRef) {
  // 16 copies of each: with R = n = 64 the same equal-time fixed point, τ = 63 for every worker.
  std::vector<double> c;
  for (const double cores : {6.0, 6.0, 4.0, 32.0}) {
    for (int i = 0; i < 16; ++i) c.push_back(1.0 / cores);
  }
  const std::vector<BatchSize> lo(64, 4), hi(64, 32);
  const auto b = staleness_bounded_plan(c, lo, hi, 32, 64.0);
  EXPECT_EQ(b[0], 6);
  EXPECT_EQ(b[32], 4);
  EXPECT_EQ(b[48], 32);
  expect_within(c, lo, b, 64.0);
  for (const double tau : expected_staleness(c, b)) EXPECT_NEAR(tau, 63.0, 1e-9);
}

TEST(StalenessBoundedPlan, ALooseBoundKeepsBRef) {
  // Four equal workers: τ = 3 whatever their batches; R = 3 holds at b_ref = 32, nothing changes (hi 96 is not used).
  const std::vector<double> c(4, 1e-3);
  const std::vector<BatchSize> lo(4, 2), hi(4, 96);
  EXPECT_EQ(staleness_bounded_plan(c, lo, hi, 32, 3.0), (std::vector<BatchSize>(4, 32)));
}

TEST(StalenessBoundedPlan, AnUnreachableBoundSendsEveryBatchToItsLowerEnd) {
  // Four equal workers cannot be less than 3 stale: with R = 2 every batch falls to lo = 2 (the rule's step then
  // shrinks the pushes as R / τ).
  const std::vector<double> c(4, 1e-3);
  const std::vector<BatchSize> lo(4, 2), hi(4, 96);
  EXPECT_EQ(staleness_bounded_plan(c, lo, hi, 32, 2.0), (std::vector<BatchSize>(4, 2)));
}

TEST(StalenessBoundedPlan, ADownWorkerGetsNothingAndDoesNotCount) {
  // Worker 2 down (c = 0). The others at 1, 2 and 4 samples per ms: t = 8 ms for all at 8, 16, 32, and
  // τ = 8 x (1/8 + 1/8) = 2 = R for each. With worker 2 counted it could not hold.
  const std::vector<double> c{1.0, 0.5, 0.0, 0.25};
  const std::vector<BatchSize> lo(4, 1), hi(4, 96);
  const auto b = staleness_bounded_plan(c, lo, hi, 32, 2.0);
  EXPECT_EQ(b, (std::vector<BatchSize>{8, 16, 0, 32}));
  expect_within(c, lo, b, 2.0);
}

TEST(StalenessBoundedPlan, BatchesStayWithinTheirBounds) {
  // The 4-core worker would want 4 but its lo is 8; the 32-core worker's hi of 16 caps b_ref.
  const std::vector<double> c{1.0 / 6, 1.0 / 6, 1.0 / 4, 1.0 / 32};
  const std::vector<BatchSize> lo{1, 1, 8, 1}, hi{96, 96, 96, 16};
  const auto b = staleness_bounded_plan(c, lo, hi, 32, 3.0);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_GE(b[k], lo[k]);
    EXPECT_LE(b[k], hi[k]);
  }
  EXPECT_EQ(b[2], 8);
  EXPECT_LE(b[3], 16);
  expect_within(c, lo, b, 3.0);
}

TEST(StalenessBoundedPolicy, NeedsItsBound) {
  auto p = make_default_registry().make("staleness-bounded", PolicyOptions{});
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("delay_threshold"), std::string::npos);
}

TEST(StalenessBoundedPolicy, SizesFromMeasuredTimes) {
  PolicyOptions o;
  o.staleness_bound = 3.0;
  auto p = make_default_registry().make("staleness-bounded", o);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ((*p)->name(), "staleness-bounded");
  ClusterSnapshot s;
  s.mode = TrainingMode::kAsp;
  s.global_batch = 128;  // b_ref 32
  const double cores[] = {6, 6, 4, 32};
  for (WorkerId k = 0; k < 4; ++k) {
    WorkerView w;
    w.id = k;
    w.batch = 32;
    w.compute_s = 32.0 / cores[k];  // one sample per second per core
    w.lo = 1;
    w.hi = 96;
    s.workers.push_back(w);
  }
  EXPECT_EQ((*p)->decide(s).batch, (std::vector<BatchSize>{6, 6, 4, 32}));
}

}  // namespace
}  // namespace omnilearn::controller
