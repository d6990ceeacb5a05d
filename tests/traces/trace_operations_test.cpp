#include "omnilearn/traces/trace_operations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "omnilearn/traces/trace_statistics.h"

namespace omnilearn::traces {
namespace {

// a: 1 on [0,10), 0.5 on [10,20); b: 0.25 on [0,5), 0 (down) on [5,15), 1 on [15,20).
AvailabilityTrace sample() {
  auto t = AvailabilityTrace::create({{"a", {{0.0, 1.0}, {10.0, 0.5}}}, {"b", {{0.0, 0.25}, {5.0, 0.0}, {15.0, 1.0}}}},
                                     20.0);
  EXPECT_TRUE(t.is_ok());
  return std::move(t).value();
}

TEST(TraceOperationsTest, SelectAndRename) {
  auto s = select_workers(sample(), {"b"});
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->worker_count(), 1u);
  EXPECT_EQ(s->fraction_at(0, 6.0), 0.0);
  EXPECT_EQ(select_workers(sample(), {"zz"}).status().code(), StatusCode::kNotFound);

  auto r = rename_workers(sample(), {{"a", "gpu0"}});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->worker_name(0), "gpu0");
  EXPECT_EQ(r->worker_name(1), "b");
  EXPECT_FALSE(rename_workers(sample(), {{"a", "b"}}).is_ok());  // duplicate name
}

TEST(TraceOperationsTest, MapRoundRobinAndByName) {
  auto m = map_round_robin(sample(), 5);
  ASSERT_TRUE(m.is_ok());
  ASSERT_EQ(m->worker_count(), 5u);
  EXPECT_EQ(m->worker_name(4), "w4");
  for (WorkerId j = 0; j < 5; ++j) EXPECT_EQ(m->changes(j), sample().changes(j % 2)) << j;
  auto n = map_by_names(sample(), {"b", "b", "a"});
  ASSERT_TRUE(n.is_ok());
  EXPECT_EQ(n->changes(1), sample().changes(1));
  EXPECT_EQ(n->changes(2), sample().changes(0));
  EXPECT_FALSE(map_by_names(sample(), {"x"}).is_ok());
  EXPECT_FALSE(map_round_robin(sample(), 0).is_ok());
}

TEST(TraceOperationsTest, ScaleTime) {
  auto s = scale_time(sample(), 0.5);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->duration(), 10.0);
  EXPECT_EQ(s->changes(1)[2].time_s, 7.5);
  auto d = scale_to_duration(sample(), 100.0);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(d->duration(), 100.0);
  EXPECT_EQ(d->fraction_at(0, 49.0), 1.0);
  EXPECT_EQ(d->fraction_at(0, 50.0), 0.5);
  EXPECT_FALSE(scale_time(sample(), 0.0).is_ok());
  EXPECT_FALSE(scale_time(sample(), -2.0).is_ok());
}

TEST(TraceOperationsTest, ClipRebasesWindow) {
  auto c = clip(sample(), 8.0, 18.0);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->duration(), 10.0);
  const std::vector<TracePoint> a{{0.0, 1.0}, {2.0, 0.5}};
  const std::vector<TracePoint> b{{0.0, 0.0}, {7.0, 1.0}};
  EXPECT_EQ(c->changes(0), a);
  EXPECT_EQ(c->changes(1), b);
  EXPECT_FALSE(clip(sample(), 5.0, 5.0).is_ok());

  auto loop = AvailabilityTrace::create({{"a", {{0.0, 1.0}, {5.0, 0.0}}}}, std::nullopt, 10.0);
  ASSERT_TRUE(loop.is_ok());
  auto u = clip(*loop, 7.0, 27.0);  // unrolls the loop
  ASSERT_TRUE(u.is_ok());
  const std::vector<TracePoint> want{{0.0, 0.0}, {3.0, 1.0}, {8.0, 0.0}, {13.0, 1.0}, {18.0, 0.0}};
  EXPECT_EQ(u->changes(0), want);
  EXPECT_FALSE(u->loop_after_s().has_value());
}

TEST(TraceOperationsTest, ResampleAveragesEachStep) {
  auto r = resample(sample(), 8.0);  // steps [0,8) [8,16) [16,20)
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const std::vector<TracePoint> a{{0.0, 1.0}, {8.0, (2 * 1.0 + 6 * 0.5) / 8}, {16.0, 0.5}};
  ASSERT_EQ(r->changes(0).size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(r->changes(0)[i].time_s, a[i].time_s);
    EXPECT_DOUBLE_EQ(r->changes(0)[i].fraction, a[i].fraction);
  }
  EXPECT_DOUBLE_EQ(r->fraction_at(1, 0.0), (5 * 0.25) / 8);
  EXPECT_DOUBLE_EQ(r->fraction_at(1, 8.0), 1.0 / 8);
  EXPECT_EQ(r->duration(), 20.0);
  EXPECT_FALSE(resample(sample(), 0.0).is_ok());
}

TEST(TraceOperationsTest, CombineMultipliesAndZeroWins) {
  auto noise = AvailabilityTrace::create({{"n0", {{0.0, 0.5}, {12.0, 0.0}}}, {"n1", {{0.0, 0.8}}}}, 30.0);
  ASSERT_TRUE(noise.is_ok());
  auto c = combine(sample(), *noise);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->worker_name(0), "a");
  EXPECT_EQ(c->duration(), 30.0);
  EXPECT_DOUBLE_EQ(c->fraction_at(0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(c->fraction_at(0, 11.0), 0.25);
  EXPECT_EQ(c->fraction_at(0, 12.0), 0.0);
  EXPECT_DOUBLE_EQ(c->fraction_at(1, 1.0), 0.2);
  EXPECT_EQ(c->fraction_at(1, 6.0), 0.0);
  EXPECT_DOUBLE_EQ(c->fraction_at(1, 25.0), 0.8);
  auto one = AvailabilityTrace::create({{"x", {}}});
  ASSERT_TRUE(one.is_ok());
  EXPECT_FALSE(combine(sample(), *one).is_ok());
}

TEST(TraceStatisticsTest, PerWorkerAndHeterogeneity) {
  const TraceStatistics st = compute_statistics(sample());
  ASSERT_EQ(st.workers.size(), 2u);
  EXPECT_DOUBLE_EQ(st.workers[0].mean_fraction, (10 * 1.0 + 10 * 0.5) / 20);
  EXPECT_EQ(st.workers[0].down_s, 0.0);
  EXPECT_EQ(st.workers[0].change_count, 1u);
  EXPECT_DOUBLE_EQ(st.workers[1].mean_fraction, (5 * 0.25 + 5 * 1.0) / 20);
  EXPECT_EQ(st.workers[1].down_s, 10.0);
  EXPECT_EQ(st.workers[1].change_count, 2u);
  EXPECT_EQ(st.workers[1].min_fraction, 0.0);
  // [0,5): 1/0.25 = 4 (2 live); [5,15): only a is live -> 1; [15,20): 1/0.5 = 2.
  ASSERT_EQ(st.heterogeneity.size(), 3u);
  EXPECT_EQ(st.heterogeneity[0].level, 4.0);
  EXPECT_EQ(st.heterogeneity[1].time_s, 5.0);
  EXPECT_EQ(st.heterogeneity[1].level, 1.0);
  EXPECT_EQ(st.heterogeneity[1].live_workers, 1u);
  EXPECT_EQ(st.heterogeneity[2].time_s, 15.0);
  EXPECT_EQ(st.heterogeneity[2].level, 2.0);
  EXPECT_DOUBLE_EQ(st.mean_heterogeneity, (5 * 4.0 + 10 * 1.0 + 5 * 2.0) / 20);
  EXPECT_EQ(st.max_heterogeneity, 4.0);
  EXPECT_EQ(st.min_live_workers, 1u);
}

}  // namespace
}  // namespace omnilearn::traces
