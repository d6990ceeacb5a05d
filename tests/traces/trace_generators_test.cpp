#include "omnilearn/traces/trace_generators.h"

#include <gtest/gtest.h>

#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_statistics.h"

namespace omnilearn::traces {
namespace {

TEST(TraceGeneratorsTest, HlStaticLevelsUseOnePlatform) {
  struct Case {
    HlRoutine routine;
    std::vector<double> fractions;
  };
  const std::vector<Case> cases{
      {HlRoutine::kHl1, {1.0, 1.0, 1.0, 12.0 / 32}},
      {HlRoutine::kHl2, {1.0, 1.0, 8.0 / 12, 16.0 / 32}},
      {HlRoutine::kHl4, {9.0 / 12, 8.0 / 12, 6.0 / 12, 25.0 / 32}},
      {HlRoutine::kHl8, {6.0 / 12, 6.0 / 12, 4.0 / 12, 1.0}},
  };
  for (const Case& c : cases) {
    auto t = generate_hl_schedule({c.routine, /*epoch_s=*/2.0, /*epochs=*/10});
    ASSERT_TRUE(t.is_ok());
    EXPECT_EQ(t->duration(), 20.0);
    for (WorkerId k = 0; k < 4; ++k) {
      EXPECT_DOUBLE_EQ(t->fraction_at(k, 3.0), c.fractions[k]);
      EXPECT_EQ(t->changes(k).size(), 1u);
    }
  }
}

TEST(TraceGeneratorsTest, HlDynamicFollowsTheEpochTable) {
  const std::vector<int> levels = hl_dynamic_levels();
  ASSERT_EQ(levels.size(), 45u);
  auto t = generate_hl_schedule({HlRoutine::kDynamic, /*epoch_s=*/1.0, /*epochs=*/0});
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->duration(), 45.0);
  const std::vector<std::pair<int, int>> expect{{0, 1}, {4, 1}, {5, 2}, {10, 4}, {15, 8}, {24, 8},
                                                {25, 4}, {30, 2}, {35, 1}, {44, 1}};
  for (const auto& [epoch, level] : expect) {
    EXPECT_EQ(levels[static_cast<std::size_t>(epoch)], level) << epoch;
    EXPECT_DOUBLE_EQ(t->fraction_at(3, epoch + 0.5), hl_cores(level)[3] / 32.0) << epoch;
  }
  const TraceStatistics st = compute_statistics(*t);
  EXPECT_DOUBLE_EQ(st.max_heterogeneity, 1.0 / (4.0 / 12));  // HL8: 32/32 vs 4/12
}

TEST(TraceGeneratorsTest, DeterministicForASeed) {
  MarkovOptions m;
  m.seed = 42;
  EXPECT_EQ(format_trace(*generate_markov_on_off(m)), format_trace(*generate_markov_on_off(m)));
  MarkovOptions other = m;
  other.seed = 43;
  EXPECT_NE(format_trace(*generate_markov_on_off(m)), format_trace(*generate_markov_on_off(other)));
  RandomWalkOptions w;
  w.seed = 5;
  EXPECT_EQ(format_trace(*generate_random_walk(w)), format_trace(*generate_random_walk(w)));
  DiurnalOptions d;
  d.seed = 5;
  EXPECT_EQ(format_trace(*generate_diurnal(d)), format_trace(*generate_diurnal(d)));
}

TEST(TraceGeneratorsTest, MarkovAvailabilityMatchesMtbfOverMtbfPlusMttr) {
  MarkovOptions m;
  m.workers = 32;
  m.duration_s = 2.0e6;
  m.mtbf_s = 900.0;
  m.mttr_s = 100.0;
  m.seed = 2024;
  SCOPED_TRACE("seed 2024");
  auto t = generate_markov_on_off(m);
  ASSERT_TRUE(t.is_ok());
  const TraceStatistics st = compute_statistics(*t);
  double mean = 0.0;
  for (const WorkerStatistics& w : st.workers) mean += w.mean_fraction;
  mean /= static_cast<double>(st.workers.size());
  EXPECT_NEAR(mean, 0.9, 0.005);  // ~64k cycles: the standard error is about 0.0004
  const double cycles = static_cast<double>(st.workers[0].change_count) / 2.0;
  EXPECT_NEAR(cycles, m.duration_s / (m.mtbf_s + m.mttr_s), 0.1 * m.duration_s / (m.mtbf_s + m.mttr_s));
}

TEST(TraceGeneratorsTest, RandomWalkStaysInBoundsAndMoves) {
  RandomWalkOptions w;
  w.workers = 8;
  w.duration_s = 10000.0;
  w.min_fraction = 0.3;
  w.max_fraction = 0.9;
  w.start = 0.6;
  w.sigma = 0.1;
  w.seed = 9;
  auto t = generate_random_walk(w);
  ASSERT_TRUE(t.is_ok());
  for (const WorkerStatistics& s : compute_statistics(*t).workers) {
    EXPECT_GE(s.min_fraction, 0.3);
    EXPECT_LE(s.max_fraction, 0.9);
    EXPECT_GT(s.change_count, 900u);
    EXPECT_LT(s.min_fraction, 0.4);  // 1000 steps of 0.1 cover the range
  }
  w.start = 0.95;
  EXPECT_FALSE(generate_random_walk(w).is_ok());
}

TEST(TraceGeneratorsTest, DiurnalMeanAndSwing) {
  DiurnalOptions d;
  d.workers = 3;
  d.duration_s = 86400.0 * 2;
  d.step_s = 60.0;
  d.mean = 0.6;
  d.amplitude = 0.3;
  auto t = generate_diurnal(d);
  ASSERT_TRUE(t.is_ok());
  for (const WorkerStatistics& s : compute_statistics(*t).workers) {
    EXPECT_NEAR(s.mean_fraction, 0.6, 1e-3);
    EXPECT_NEAR(s.min_fraction, 0.3, 1e-3);
    EXPECT_NEAR(s.max_fraction, 0.9, 1e-3);
  }
}

}  // namespace
}  // namespace omnilearn::traces
