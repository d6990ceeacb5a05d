// The pipeline orders and the replica's event simulation: the closed forms of GPipe, 1F1B and interleaved 1F1B for
// equal stages, exactly; for unequal stages and transfers, the simulation against a brute-force fixed point.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "omnilearn/hybrid/pipeline_schedule.h"
#include "omnilearn/hybrid/pipeline_step.h"

namespace omnilearn::hybrid {
namespace {

ReplicaTimes equal_times(std::int64_t virtual_stages, Seconds f, Seconds b) {
  ReplicaTimes t;
  t.forward_s.assign(static_cast<std::size_t>(virtual_stages), f);
  t.backward_s.assign(static_cast<std::size_t>(virtual_stages), b);
  t.send_forward_s.assign(static_cast<std::size_t>(virtual_stages - 1), 0.0);
  t.send_backward_s.assign(static_cast<std::size_t>(virtual_stages - 1), 0.0);
  return t;
}

TEST(PipelineSchedule, EveryStageRunsEachPassOnceAndForwardBeforeBackward) {
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kInterleaved}) {
    for (std::int64_t p = 1; p <= 6; ++p) {
      for (std::int64_t v : kind == ScheduleKind::kInterleaved ? std::vector<std::int64_t>{2, 3} : std::vector<std::int64_t>{1}) {
        for (std::int64_t m = p; m <= 3 * p; m += (kind == ScheduleKind::kInterleaved ? p : 1)) {
          for (std::int64_t s = 0; s < p; ++s) {
            auto order = stage_order({kind, v}, p, s, m);
            ASSERT_TRUE(order.is_ok()) << order.status().message();
            std::map<std::tuple<int, std::int64_t, std::int64_t>, int> seen;
            for (const auto& op : *order) {
              if (op.pass == PassKind::kBackward) {
                EXPECT_EQ(seen.count({0, op.micro_batch, op.chunk}), 1u) << "backward before forward";
              }
              ++seen[{op.pass == PassKind::kForward ? 0 : 1, op.micro_batch, op.chunk}];
            }
            EXPECT_EQ(seen.size(), static_cast<std::size_t>(2 * m * v)) << schedule_name(kind) << " p=" << p;
            for (const auto& [key, n] : seen) EXPECT_EQ(n, 1);
          }
        }
      }
    }
  }
}

TEST(PipelineSchedule, OneFOneBHoldsAtMostStagesMinusStageMicroBatches) {
  const std::int64_t p = 4, m = 12;
  for (std::int64_t s = 0; s < p; ++s) {
    auto order = stage_order({ScheduleKind::kOneFOneB, 1}, p, s, m);
    ASSERT_TRUE(order.is_ok());
    std::int64_t live = 0, peak = 0;
    for (const auto& op : *order) {
      live += op.pass == PassKind::kForward ? 1 : -1;
      peak = std::max(peak, live);
    }
    EXPECT_EQ(peak, p - s);
  }
}

TEST(PipelineSchedule, RefusesWhatCannotRun) {
  EXPECT_FALSE(stage_order({ScheduleKind::kInterleaved, 2}, 4, 0, 6).is_ok());  // 6 not a multiple of 4
  EXPECT_FALSE(stage_order({ScheduleKind::kInterleaved, 1}, 4, 0, 8).is_ok());
  EXPECT_FALSE(stage_order({ScheduleKind::kOneFOneB, 2}, 4, 0, 8).is_ok());
  EXPECT_FALSE(stage_order({ScheduleKind::kOneFOneB, 1}, 4, 4, 8).is_ok());
  EXPECT_FALSE(stage_order({ScheduleKind::kGPipe, 1}, 0, 0, 8).is_ok());
  auto bad = parse_schedule_kind("zb-h1");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("gpipe, 1f1b or interleaved"), std::string::npos);
}

// (m + p - 1)(f + b) for GPipe and 1F1B; (m + (p - 1) / v)(f + b) interleaved, each chunk taking 1/v of a stage.
TEST(PipelineStep, EqualStagesMeetTheClosedFormsExactly) {
  const Seconds f = 0.013, b = 0.029;
  for (std::int64_t p : {1, 2, 3, 4, 8}) {
    for (std::int64_t m : {1, 2, 5, 8, 16, 32}) {
      for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
        auto step = run_pipeline({kind, 1}, m, equal_times(p, f, b));
        ASSERT_TRUE(step.is_ok()) << step.status().message();
        EXPECT_NEAR(step->makespan_s, static_cast<double>(m + p - 1) * (f + b), 1e-12)
            << schedule_name(kind) << " p=" << p << " m=" << m;
      }
      if (m % p != 0) continue;
      for (std::int64_t v : {2, 3, 4}) {
        const double dv = static_cast<double>(v);
        auto step = run_pipeline({ScheduleKind::kInterleaved, v}, m, equal_times(p * v, f / dv, b / dv));
        ASSERT_TRUE(step.is_ok()) << step.status().message();
        EXPECT_NEAR(step->makespan_s, (static_cast<double>(m) + static_cast<double>(p - 1) / dv) * (f + b), 1e-12)
            << "interleaved p=" << p << " m=" << m << " v=" << v;
      }
    }
  }
}

// A second, independent evaluation: every pass's start is the latest of its stage's previous pass's end and its
// input's arrival, iterated to the fixed point (a longest path by relaxation).
Seconds brute_force_makespan(const PipelineSchedule& schedule, std::int64_t m, const ReplicaTimes& t) {
  const auto vs = static_cast<std::int64_t>(t.forward_s.size());
  const std::int64_t p = vs / schedule.chunks;
  std::map<std::tuple<int, std::int64_t, std::int64_t>, Seconds> end;  // (pass, virtual stage, micro-batch)
  std::vector<std::vector<PipelineOp>> orders;
  for (std::int64_t s = 0; s < p; ++s) orders.push_back(stage_order(schedule, p, s, m).value());
  for (bool changed = true; changed;) {
    changed = false;
    for (std::int64_t s = 0; s < p; ++s) {
      Seconds prev = 0.0;
      for (const auto& op : orders[static_cast<std::size_t>(s)]) {
        const std::int64_t j = op.chunk * p + s;
        const auto ju = static_cast<std::size_t>(j);
        Seconds ready = 0.0;
        if (op.pass == PassKind::kForward && j > 0) {
          ready = end[{0, j - 1, op.micro_batch}] + t.send_forward_s[ju - 1];
        } else if (op.pass == PassKind::kBackward) {
          ready = j + 1 < vs ? end[{1, j + 1, op.micro_batch}] + t.send_backward_s[ju] : end[{0, j, op.micro_batch}];
        }
        const Seconds e = std::max(prev, ready) +
                          (op.pass == PassKind::kForward ? t.forward_s[ju] : t.backward_s[ju]);
        Seconds& slot = end[{op.pass == PassKind::kForward ? 0 : 1, j, op.micro_batch}];
        if (e > slot + 1e-15) {
          slot = e;
          changed = true;
        }
        prev = slot;
      }
    }
  }
  Seconds makespan = 0.0;
  for (const auto& [key, e] : end) makespan = std::max(makespan, e);
  return makespan;
}

TEST(PipelineStep, UnequalStagesAndTransfersMatchABruteForceSimulation) {
  const std::uint64_t seed = 20261203;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.001, 0.05);
  int cases = 0;
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kInterleaved}) {
    for (std::int64_t p : {2, 3, 4, 6}) {
      const std::int64_t v = kind == ScheduleKind::kInterleaved ? 2 : 1;
      for (std::int64_t m : {p, 2 * p, 3 * p}) {
        ReplicaTimes t;
        for (std::int64_t j = 0; j < p * v; ++j) {
          t.forward_s.push_back(u(rng));
          t.backward_s.push_back(2.0 * u(rng));
          if (j + 1 < p * v) {
            t.send_forward_s.push_back(u(rng) / 4.0);
            t.send_backward_s.push_back(u(rng) / 4.0);
          }
        }
        auto step = run_pipeline({kind, v}, m, t);
        ASSERT_TRUE(step.is_ok()) << step.status().message();
        EXPECT_NEAR(step->makespan_s, brute_force_makespan({kind, v}, m, t), 1e-12)
            << "seed " << seed << " " << schedule_name(kind) << " p=" << p << " m=" << m;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 36);
}

TEST(PipelineStep, TheSlowestStageSetsThePace) {
  // The slowest stage is busy m x (f + b); the stages before it must fill it and drain after it. The textbook
  // estimate sum(f + b) + (m - 1) x max(f + b) bounds the step from above.
  ReplicaTimes t = equal_times(4, 0.01, 0.02);
  t.forward_s[2] = 0.02;
  t.backward_s[2] = 0.04;
  const std::int64_t m = 16;
  auto step = run_pipeline({ScheduleKind::kOneFOneB, 1}, m, t);
  ASSERT_TRUE(step.is_ok());
  EXPECT_GE(step->makespan_s, m * 0.06 + (0.01 + 0.01) + (0.02 + 0.02) - 1e-12);
  EXPECT_LE(step->makespan_s, 3 * 0.03 + 0.06 + (m - 1) * 0.06 + 1e-12);
  for (const auto& s : step->stages) EXPECT_LE(s.compute_s, step->makespan_s);
  EXPECT_NEAR(step->stages[2].compute_s, m * 0.06, 1e-12);
}

// A pass clock that runs one stage at half speed is the same step as that stage's times doubled.
TEST(PipelineStep, APassClockTimesEachPass) {
  const ReplicaTimes t = equal_times(4, 0.01, 0.02);
  ReplicaTimes slow = t;
  slow.forward_s[2] *= 2, slow.backward_s[2] *= 2;
  const PassClock half_speed_stage_2 = [](std::size_t stage, Seconds start_s, Seconds duration_s) {
    return start_s + (stage == 2 ? 2.0 : 1.0) * duration_s;
  };
  auto clocked = run_pipeline({ScheduleKind::kOneFOneB, 1}, 8, t, /*keep_ops=*/false, half_speed_stage_2);
  auto doubled = run_pipeline({ScheduleKind::kOneFOneB, 1}, 8, slow);
  ASSERT_TRUE(clocked.is_ok() && doubled.is_ok());
  EXPECT_NEAR(clocked->makespan_s, doubled->makespan_s, 1e-12);
  EXPECT_NEAR(clocked->stages[2].compute_s, doubled->stages[2].compute_s, 1e-12);
}

TEST(PipelineStep, RefusesTimesThatDoNotFit) {
  ReplicaTimes t = equal_times(4, 0.01, 0.02);
  t.send_forward_s.pop_back();
  auto r = run_pipeline({ScheduleKind::kOneFOneB, 1}, 8, t);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("send_forward_s"), std::string::npos);
  t = equal_times(4, 0.01, 0.02);
  t.backward_s[1] = std::nan("");
  r = run_pipeline({ScheduleKind::kOneFOneB, 1}, 8, t);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("backward_s[1]"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::hybrid
