#include "omnilearn/emulator/global_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace omnilearn::emulator {
namespace {

TEST(SplitProportionally, SumsToTotalAndFollowsWeights) {
  const std::vector<BatchSize> w = {10, 20, 0, 70};
  const auto parts = split_proportionally(33, w);
  EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), BatchSize{0}), 33);
  EXPECT_EQ(parts[2], 0);
  EXPECT_GE(parts[3], parts[1]);
  EXPECT_GE(parts[1], parts[0]);
}

// Any batch sequence: every epoch hands out every sample exactly once.
TEST(GlobalSampler, EveryEpochCoversTheDataExactlyOnce) {
  for (std::uint64_t seed : {1u, 7u, 42u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::int64_t n = 997;  // prime: never a multiple of the batch
    GlobalSampler sampler(n, seed);
    std::vector<int> seen(n, 0);
    std::int64_t epoch = 0;
    for (int step = 0; step < 400; ++step) {
      std::vector<BatchSize> batch(4);
      for (auto& b : batch) b = static_cast<BatchSize>(rng() % 40);
      if (std::accumulate(batch.begin(), batch.end(), BatchSize{0}) == 0) batch[0] = 1;
      const StepAssignment a = sampler.next(batch);
      if (a.epoch != epoch) {
        for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "epoch " << epoch << " sample " << i;
        std::fill(seen.begin(), seen.end(), 0);
        epoch = a.epoch;
      }
      for (std::size_t k = 0; k < batch.size(); ++k) {
        EXPECT_LE(a.batch[k], batch[k]);
        if (!a.last_in_epoch) {
          EXPECT_EQ(a.batch[k], batch[k]);
        }
        for (const std::int64_t i : sampler.indices(a, k)) ++seen[i];
      }
    }
    EXPECT_GE(epoch, 2);
  }
}

TEST(GlobalSampler, SameSeedSameAssignmentDifferentEpochsDifferentOrder) {
  GlobalSampler a(100, 5), b(100, 5);
  const std::vector<BatchSize> batch = {30, 20};
  for (int i = 0; i < 6; ++i) {
    const auto sa = a.next(batch);
    const auto sb = b.next(batch);
    for (std::size_t k = 0; k < 2; ++k) {
      const auto ia = a.indices(sa, k), ib = b.indices(sb, k);
      EXPECT_TRUE(std::equal(ia.begin(), ia.end(), ib.begin(), ib.end()));
    }
  }
  GlobalSampler c(100, 5);
  const std::vector<BatchSize> all = {100};
  const auto e0 = c.next(all);
  const std::vector<std::int64_t> first(c.indices(e0, 0).begin(), c.indices(e0, 0).end());
  const auto e1 = c.next(all);
  EXPECT_EQ(e1.epoch, 1);
  EXPECT_FALSE(std::equal(first.begin(), first.end(), c.indices(e1, 0).begin()));
}

}  // namespace
}  // namespace omnilearn::emulator
