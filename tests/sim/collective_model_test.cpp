// The collective schedules' analytic time on a uniform star against each algorithm's alpha-beta closed form, and the
// DDP overlap arithmetic. Pure functions: no SimGrid engine.
#include "collective_model.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "omnilearn/scenarios/network_spec.h"

namespace omnilearn::sim {
namespace {

using scenarios::algorithm_name;
using scenarios::AllreduceAlgorithm;
using scenarios::AllreduceSpec;

std::vector<WorkerId> ranks(std::size_t p) {
  std::vector<WorkerId> out(p);
  std::iota(out.begin(), out.end(), WorkerId{0});
  return out;
}

AllreduceSpec spec_of(AllreduceAlgorithm a) {
  AllreduceSpec s;
  s.algorithm = a;
  s.workers_per_node = 4;
  s.shards = 3;
  return s;
}

constexpr AllreduceAlgorithm kAll[] = {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kHierarchicalRing,
                                       AllreduceAlgorithm::kDoubleBinaryTree, AllreduceAlgorithm::kHalvingDoubling,
                                       AllreduceAlgorithm::kParameterServer};

TEST(CollectiveModel, ScheduleOnAUniformStarIsTheClosedForm) {
  for (AllreduceAlgorithm a : kAll) {
    for (std::size_t p : {2u, 8u, 12u, 16u, 64u}) {
      for (double bytes : {1e6, 45e6}) {
        const AllreduceSpec spec = spec_of(a);
        const Seconds alpha = 2.1e-5;
        const double bw = 1.25e9;
        const std::int64_t chunks = tree_chunks(spec, p, bytes, alpha, bw);
        const Seconds analytic = uniform_star_time_s(make_schedule(spec, ranks(p), bytes, chunks), p, alpha, bw);
        const Seconds closed = closed_form_s(spec, p, bytes, alpha, bw, chunks);
        EXPECT_NEAR(analytic, closed, 1e-9 * closed) << algorithm_name(a) << " p=" << p << " bytes=" << bytes;
      }
    }
  }
}

TEST(CollectiveModel, ClosedFormsHaveTheirTextbookLimits) {
  const double bytes = 45e6, bw = 1.25e9;
  // No latency: the bandwidth-optimal algorithms send 2(P-1)/P of the bytes per rank.
  for (AllreduceAlgorithm a : {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kHalvingDoubling}) {
    EXPECT_NEAR(closed_form_s(spec_of(a), 16, bytes, 0.0, bw, 1), 2.0 * 15.0 / 16.0 * bytes / bw, 1e-12)
        << algorithm_name(a);
  }
  // The double tree approaches 2 S / B as its pipeline deepens.
  const AllreduceSpec tree = spec_of(AllreduceAlgorithm::kDoubleBinaryTree);
  EXPECT_NEAR(closed_form_s(tree, 16, bytes, 0.0, bw, 1024), 2.0 * bytes / bw, 0.01 * 2.0 * bytes / bw);
  // Latency terms: ring 2(P-1) alpha, halving-doubling 2 log2 P alpha.
  EXPECT_NEAR(closed_form_s(spec_of(AllreduceAlgorithm::kRing), 16, 0.0, 1e-5, bw, 1), 30e-5, 1e-15);
  EXPECT_NEAR(closed_form_s(spec_of(AllreduceAlgorithm::kHalvingDoubling), 16, 0.0, 1e-5, bw, 1), 8e-5, 1e-15);
}

TEST(CollectiveModel, AutomaticTreeChunksMinimiseTheTime) {
  const AllreduceSpec tree = spec_of(AllreduceAlgorithm::kDoubleBinaryTree);
  const std::int64_t best = tree_chunks(tree, 64, 45e6, 2e-5, 1.25e9);
  EXPECT_GT(best, 1);
  for (std::int64_t c : {best / 2, best * 2}) {
    EXPECT_LE(closed_form_s(tree, 64, 45e6, 2e-5, 1.25e9, best), closed_form_s(tree, 64, 45e6, 2e-5, 1.25e9, c));
  }
}

TEST(CollectiveModel, OneBucketIsComputeThenAllReduce) {
  EXPECT_DOUBLE_EQ(overlapped_end_s(2.0, 3.0, 1, 2.0 / 3.0, 0.4), 3.4);
}

TEST(CollectiveModel, ManyBucketsOnAComputeBoundStepApproachTheLonger) {
  const Seconds compute = 1.0, allreduce = 0.5;
  const std::int64_t buckets = 100;
  const Seconds end = overlapped_end_s(0.0, compute, buckets, 2.0 / 3.0, allreduce / buckets);
  EXPECT_LT(end, 1.01 * std::max(compute, allreduce));
  EXPECT_GE(end, std::max(compute, allreduce));
  // Fewer buckets hide less.
  EXPECT_GT(overlapped_end_s(0.0, compute, 4, 2.0 / 3.0, allreduce / 4), end);
}

TEST(CollectiveModel, BucketBytesSetTheCount) {
  AllreduceSpec s;
  s.bucket_bytes = 25e6;
  EXPECT_EQ(bucket_count(s, 46.8e6), 2);
  s.bucket_bytes = 0.0;
  s.buckets = 7;
  EXPECT_EQ(bucket_count(s, 46.8e6), 7);
}

}  // namespace
}  // namespace omnilearn::sim
