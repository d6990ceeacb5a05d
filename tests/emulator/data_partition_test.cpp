// workload.partition's split (data_partition.h) and the sampler over a worker's own samples (global_sampler.h):
// each worker holds only its shards of the label-sorted set, the shards cover the set once, and a worker's sampler
// hands out its samples and no others.
#include "omnilearn/emulator/data_partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "omnilearn/emulator/global_sampler.h"

namespace omnilearn::emulator {
namespace {

// `per_class` samples of each of `classes` labels, in a seeded random order (as a dataset's file is not sorted).
std::vector<std::int64_t> shuffled_labels(int classes, int per_class, std::uint64_t seed) {
  std::vector<std::int64_t> labels;
  for (int c = 0; c < classes; ++c) labels.insert(labels.end(), static_cast<std::size_t>(per_class), c);
  std::mt19937_64 rng(seed);
  for (std::size_t i = labels.size() - 1; i > 0; --i) std::swap(labels[i], labels[rng() % (i + 1)]);
  return labels;
}

std::set<std::int64_t> classes_of(const std::vector<std::int64_t>& labels, const std::vector<std::int64_t>& idx) {
  std::set<std::int64_t> out;
  for (std::int64_t i : idx) out.insert(labels[static_cast<std::size_t>(i)]);
  return out;
}

scenarios::PartitionSpec sorted_shards(std::int64_t per_worker) {
  return {scenarios::PartitionKind::kSortedShards, per_worker};
}

TEST(DataPartition, IidHoldsEverything) {
  const auto labels = shuffled_labels(10, 30, 1);
  EXPECT_TRUE(partition_samples(labels, 4, 2, scenarios::PartitionSpec{}).empty()) << "empty: the whole set";
}

// The study's cell: 16 workers, Fashion-MNIST's 10 balanced classes, one shard each. Worker k holds 3,750 samples of
// at most two adjacent classes; the four fastest copies (workers 12-15) hold classes 7, 8 and 9 only.
TEST(DataPartition, OneShardPerWorkerIsAContiguousRangeOfClasses) {
  const auto labels = shuffled_labels(10, 6000, 7);
  std::vector<int> owner(labels.size(), -1);
  std::int64_t previous_max = -1;
  std::set<std::int64_t> fast;
  for (std::size_t k = 0; k < 16; ++k) {
    SCOPED_TRACE("worker " + std::to_string(k));
    const auto mine = partition_samples(labels, 16, k, sorted_shards(1));
    EXPECT_EQ(mine.size(), 3750u);
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    for (std::int64_t i : mine) {
      EXPECT_EQ(owner[static_cast<std::size_t>(i)], -1) << "sample " << i << " held twice";
      owner[static_cast<std::size_t>(i)] = static_cast<int>(k);
    }
    const auto held = classes_of(labels, mine);
    EXPECT_LE(held.size(), 2u);
    EXPECT_GE(*held.begin(), previous_max) << "shards follow the label order";
    previous_max = *held.rbegin();
    if (k >= 12) fast.insert(held.begin(), held.end());
  }
  EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0) << "every sample is held";
  EXPECT_EQ(fast, (std::set<std::int64_t>{7, 8, 9}));
}

// Two shards per worker of 4: worker k holds shards k and k + 4 of 8, so classes from both halves of the order; the
// sizes differ by at most one when the shards do not divide the set.
TEST(DataPartition, SeveralShardsPerWorkerInterleave) {
  const auto labels = shuffled_labels(8, 101, 3);  // 808 samples, 8 shards of 101
  for (std::size_t k = 0; k < 4; ++k) {
    const auto held = classes_of(labels, partition_samples(labels, 4, k, sorted_shards(2)));
    EXPECT_EQ(held, (std::set<std::int64_t>{static_cast<std::int64_t>(k), static_cast<std::int64_t>(k + 4)}));
  }
  const auto odd = shuffled_labels(3, 7, 5);  // 21 samples, 6 shards: 4, 4, 4, 3, 3, 3
  std::size_t total = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const std::size_t size = partition_samples(odd, 3, k, sorted_shards(2)).size();
    EXPECT_TRUE(size == 7u || size == 8u) << size;
    total += size;
  }
  EXPECT_EQ(total, odd.size());
}

// A sampler over a worker's samples: every epoch hands out each of them once and nothing else, seeded as the
// full sampler is (over 0..n-1 it draws the same order).
TEST(DataPartition, TheWorkersSamplerDrawsOnlyItsSamples) {
  const auto labels = shuffled_labels(10, 50, 11);
  const auto mine = partition_samples(labels, 5, 3, sorted_shards(1));
  const std::set<std::int64_t> allowed(mine.begin(), mine.end());
  GlobalSampler sampler(mine, 42);
  std::multiset<std::int64_t> epoch0;
  const std::vector<BatchSize> batch{7};
  while (true) {
    const StepAssignment a = sampler.next(batch);
    if (a.epoch > 0) break;
    for (std::int64_t i : sampler.indices(a, 0)) {
      EXPECT_TRUE(allowed.count(i)) << i;
      epoch0.insert(i);
    }
  }
  EXPECT_EQ(std::set<std::int64_t>(epoch0.begin(), epoch0.end()), allowed);
  EXPECT_EQ(epoch0.size(), allowed.size()) << "each sample once per epoch";
  std::vector<std::int64_t> all(labels.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  GlobalSampler whole(static_cast<std::int64_t>(all.size()), 9), subset(all, 9);
  for (int step = 0; step < 80; ++step) {
    const StepAssignment a = whole.next(batch), b = subset.next(batch);
    const auto x = whole.indices(a, 0), y = subset.indices(b, 0);
    ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << "step " << step;
  }
}

}  // namespace
}  // namespace omnilearn::emulator
