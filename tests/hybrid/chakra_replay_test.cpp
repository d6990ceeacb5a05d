#include "omnilearn/hybrid/chakra_replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../traces/chakra_fixture.h"

namespace omnilearn::hybrid {
namespace {

using traces::ChakraCollective;
using traces::ChakraRank;
using traces::testing::coll;
using traces::testing::comp;
using traces::testing::recv;
using traces::testing::send;

constexpr double kEps = 1e-12;

// 1 GB/s and 1 us between every pair.
ChakraReplayOptions flat() {
  ChakraReplayOptions o;
  o.network.inter = ChakraLink{1e9, 1e-6};
  o.network.intra = o.network.inter;
  return o;
}

ChakraRank rank_of(std::vector<traces::ChakraNode> nodes) {
  ChakraRank r;
  r.version = "0.0.4";
  r.nodes = std::move(nodes);
  return r;
}

std::string error_of(const std::vector<ChakraRank>& ranks, const ChakraReplayOptions& o = flat()) {
  auto r = replay_chakra(ranks, o);
  return r.is_ok() ? std::string("ok") : r.status().message();
}

// Two ranks compute (100 and 200 us), all-reduce 1 MB, then compute 50 us each.
std::vector<ChakraRank> compute_then_all_reduce() {
  return {rank_of({comp(1, 100), coll(2, ChakraCollective::kAllReduce, 1'000'000, {1}), comp(3, 50, {2})}),
          rank_of({comp(1, 200), coll(2, ChakraCollective::kAllReduce, 1'000'000, {1}), comp(3, 50, {2})})};
}

TEST(ChakraReplay, ComputeThenAllReduce) {
  auto got = replay_chakra(compute_then_all_reduce(), flat());
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  // ring all-reduce of n = 2: 2(n-1)/n x 1e6 / 1e9 + 2(n-1) x 1e-6 = 1.002 ms, from 200 us (the later rank)
  const double reduce_end = 200e-6 + 1.002e-3;
  ASSERT_EQ(got->ranks.size(), 2u);
  EXPECT_NEAR(got->makespan_s, reduce_end + 50e-6, kEps);
  EXPECT_NEAR(got->ranks[0].finish_s, reduce_end + 50e-6, kEps);
  EXPECT_NEAR(got->ranks[0].compute_s, 150e-6, kEps);
  EXPECT_NEAR(got->ranks[0].comm_s, 1.002e-3, kEps);
  EXPECT_NEAR(got->ranks[0].idle_s, 100e-6, kEps);  // waiting for rank 1 to arrive
  EXPECT_NEAR(got->ranks[1].compute_s, 250e-6, kEps);
  EXPECT_NEAR(got->ranks[1].comm_s, 1.002e-3, kEps);
  EXPECT_NEAR(got->ranks[1].idle_s, 0.0, kEps);
}

TEST(ChakraReplay, HalfSpeedDoublesCompute) {
  ChakraReplayOptions o = flat();
  o.speed = {1.0, 0.5};
  auto got = replay_chakra(compute_then_all_reduce(), o);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_NEAR(got->ranks[1].compute_s, 500e-6, kEps);
  EXPECT_NEAR(got->ranks[0].compute_s, 150e-6, kEps);
  EXPECT_NEAR(got->ranks[0].idle_s, 300e-6, kEps);
  EXPECT_NEAR(got->makespan_s, 400e-6 + 1.002e-3 + 100e-6, kEps);
  EXPECT_NEAR(got->ranks[0].finish_s, 400e-6 + 1.002e-3 + 50e-6, kEps);
}

TEST(ChakraReplay, SendReceivePipelineOfTwoRanks) {
  // Rank 0 computes A then B (100 us each) and sends 1 MB after each; rank 1 receives both and computes C on the
  // first and D on the second (300 us each) on its one stream.
  const std::vector<ChakraRank> ranks = {
      rank_of({comp(1, 100), send(2, 1, 1'000'000, {1}), comp(3, 100, {1}), send(4, 1, 1'000'000, {3})}),
      rank_of({recv(1, 0, 1'000'000), recv(2, 0, 1'000'000), comp(3, 300, {1}), comp(4, 300, {2})})};
  auto got = replay_chakra(ranks, flat());
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const double transfer = 1e-6 + 1e-3;
  const double first = 100e-6 + transfer;   // 1.101 ms
  const double second = 200e-6 + transfer;  // 1.201 ms
  EXPECT_NEAR(got->ranks[0].finish_s, second, kEps);
  EXPECT_NEAR(got->ranks[0].compute_s, 200e-6, kEps);
  EXPECT_NEAR(got->ranks[0].comm_s, second - 100e-6, kEps);  // the two transfers overlap
  EXPECT_NEAR(got->ranks[0].idle_s, 0.0, kEps);
  EXPECT_NEAR(got->ranks[1].finish_s, first + 600e-6, kEps);  // D waits for C's stream
  EXPECT_NEAR(got->ranks[1].compute_s, 600e-6, kEps);
  EXPECT_NEAR(got->ranks[1].idle_s, 100e-6, kEps);  // before the first send was posted
  EXPECT_NEAR(got->makespan_s, first + 600e-6, kEps);
}

TEST(ChakraReplay, OneComputeStreamPerRankInFileOrder) {
  auto got = replay_chakra({rank_of({comp(1, 100), comp(2, 200), comp(3, 50, {1})})}, flat());
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_NEAR(got->makespan_s, 350e-6, kEps);
  EXPECT_NEAR(got->ranks[0].compute_s, 350e-6, kEps);
  EXPECT_NEAR(got->ranks[0].idle_s, 0.0, kEps);
}

TEST(ChakraReplay, IntraAndInterNodeLinksAndGroups) {
  ChakraReplayOptions o = flat();
  o.network.intra = ChakraLink{1e10, 0.0};
  o.network.ranks_per_node = 2;
  // ranks 0,1 on node 0, ranks 2,3 on node 1: 0 -> 1 intra, 0 -> 2 inter; group "pair" (0, 1) intra; the world
  // broadcast (4 ranks) inter.
  std::vector<ChakraRank> ranks = {
      rank_of({send(1, 1, 1'000'000), send(2, 2, 1'000'000), coll(3, ChakraCollective::kAllGather, 2'000'000),
               coll(4, ChakraCollective::kBroadcast, 1'000'000, {1, 2, 3})}),
      rank_of({recv(1, 0, 1'000'000), coll(3, ChakraCollective::kAllGather, 2'000'000),
               coll(4, ChakraCollective::kBroadcast, 1'000'000, {1, 3})}),
      rank_of({recv(1, 0, 1'000'000), coll(4, ChakraCollective::kBroadcast, 1'000'000, {1})}),
      rank_of({coll(4, ChakraCollective::kBroadcast, 1'000'000)})};
  ranks[0].nodes[2].pg_name = "pair";
  ranks[1].nodes[1].pg_name = "pair";
  auto got = replay_chakra(ranks, o);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const double intra_send = 1e6 / 1e10;                             // 0.1 ms
  const double inter_send = 1e-6 + 1e6 / 1e9;                       // 1.001 ms
  const double gather = 0.5 * 2e6 / 1e10;                           // (n-1)/n x B / bw, no latency: 0.1 ms
  const double broadcast = 1e6 / 1e9 + 2 * 1e-6;                    // B / bw + ceil(log2 4) x latency
  EXPECT_NEAR(got->ranks[1].comm_s, intra_send + broadcast, kEps);  // the send and the gather overlap
  const double start = std::max({intra_send, inter_send, gather});
  EXPECT_NEAR(got->makespan_s, start + broadcast, kEps);
  for (const ChakraRankTimes& t : got->ranks) EXPECT_NEAR(t.finish_s, start + broadcast, kEps);
  EXPECT_NEAR(got->ranks[3].idle_s, start, kEps);
}

TEST(ChakraReplay, IsDeterministic) {
  const auto ranks = compute_then_all_reduce();
  auto a = replay_chakra(ranks, flat());
  auto b = replay_chakra(ranks, flat());
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(a->ranks[r].finish_s, b->ranks[r].finish_s);
    EXPECT_EQ(a->ranks[r].idle_s, b->ranks[r].idle_s);
  }
}

TEST(ChakraReplay, RefusesUnmatchedPointToPoint) {
  EXPECT_EQ(error_of({rank_of({send(1, 1, 8), send(2, 1, 8)}), rank_of({recv(1, 0, 8)})}),
            "rank 0 node 1 (id 2, 'send2'): send to rank 1 with tag 0 has no match: rank 0 sends 2 and rank 1 "
            "receives 1 on that channel");
  EXPECT_EQ(error_of({rank_of({send(1, 1, 8, {}, 3)}), rank_of({recv(1, 0, 8, {}, 4)})}),
            "rank 0 node 0 (id 1, 'send1'): send to rank 1 with tag 3 has no match: rank 0 sends 1 and rank 1 "
            "receives 0 on that channel");
  EXPECT_EQ(error_of({rank_of({send(1, 5, 8)}), rank_of({})}),
            "rank 0 node 0 (id 1, 'send1'): comm_dst 5 is not another rank of the trace (0..1)");
}

TEST(ChakraReplay, RefusesCollectivesThatDoNotMatch) {
  EXPECT_EQ(error_of({rank_of({coll(1, ChakraCollective::kAllReduce, 8), coll(2, ChakraCollective::kAllReduce, 8)}),
                      rank_of({coll(1, ChakraCollective::kAllReduce, 8)})}),
            "rank 0 node 1 (id 2, 'coll2'): collective 2 of process group '' has no counterpart on rank 1 (1 on rank "
            "1, 2 on rank 0)");
  EXPECT_EQ(error_of({rank_of({coll(1, ChakraCollective::kAllReduce, 8)}),
                      rank_of({coll(1, ChakraCollective::kAllGather, 8)})}),
            "rank 1 node 0 (id 1, 'coll1'): collective 1 of process group '' is ALL_GATHER here but ALL_REDUCE on "
            "rank 0");
}

TEST(ChakraReplay, RefusesADeadlockNamingTheRankAndNode) {
  // Each rank receives before it sends.
  const std::string err =
      error_of({rank_of({recv(1, 1, 8), send(2, 1, 8, {1})}), rank_of({recv(1, 0, 8), send(2, 0, 8, {1})})});
  EXPECT_EQ(err,
            "deadlock: rank 0 node 0 (id 1, 'recv1') (COMM_RECV_NODE) waits for rank 1 node 1 (id 2, 'send2'), which "
            "is never reached");
}

TEST(ChakraReplay, RefusesBadOptions) {
  ChakraReplayOptions o = flat();
  o.speed = {1.0};
  EXPECT_EQ(error_of(compute_then_all_reduce(), o), "speed: 1 factors for 2 ranks");
  o.speed = {1.0, 0.0};
  EXPECT_EQ(error_of(compute_then_all_reduce(), o), "speed of rank 1: expected a finite number > 0, got 0.000000");
  o = flat();
  o.network.inter.bandwidth_bytes_per_s = 0.0;
  EXPECT_NE(error_of(compute_then_all_reduce(), o).find("network.inter.bandwidth_bytes_per_s"), std::string::npos);
}

TEST(ChakraReplay, ReplaysWhatTheReaderReads) {
  std::vector<ChakraRank> back;
  for (const ChakraRank& r : compute_then_all_reduce()) {
    auto parsed = traces::parse_chakra_rank(traces::testing::encode_rank(r), "x.et");
    ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
    back.push_back(*parsed);
  }
  auto got = replay_chakra(back, flat());
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_NEAR(got->makespan_s, 200e-6 + 1.002e-3 + 50e-6, kEps);
}

}  // namespace
}  // namespace omnilearn::hybrid
