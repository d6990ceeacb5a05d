#include "omnilearn/run/step_frequency.h"

#include <gtest/gtest.h>

#include <cmath>

#include "omnilearn/run/energy_meter.h"

namespace omnilearn::run {
namespace {

using Kind = scenarios::EnergyObjective::Kind;

scenarios::EnergySpec model(Kind kind, double percent, double min_frequency = 0.5) {
  scenarios::EnergySpec s;
  s.objective = scenarios::EnergyObjective{kind, percent};
  s.min_frequency = min_frequency;
  s.power_exponent = 3.0;
  return s;
}

StepWorker worker(Seconds compute, double idle, double busy, double wait) {
  return StepWorker{compute, idle, busy, wait, {}};
}

TEST(StepFrequency, SlackFrequencyArrivesWithTheSlowestAboveTheFloor) {
  EXPECT_DOUBLE_EQ(slack_frequency(3.0, 1.0, 0.5), 0.75);
  EXPECT_DOUBLE_EQ(slack_frequency(1.0, 3.0, 0.5), 0.5);
}

TEST(StepFrequency, NoObjectiveLeavesEveryFactorAtOne) {
  scenarios::EnergySpec s;
  const StepFrequencies f = choose_step_frequencies({worker(1.0, 0, 100, 0), worker(0.5, 0, 100, 0)}, 0.0, s);
  EXPECT_EQ(f.frequency, (std::vector<double>{1.0, 1.0}));
  EXPECT_DOUBLE_EQ(f.compute_phase_s, 1.0);
}

// Two workers computing 1 s and 0.5 s at full speed, 0 W idle and waiting, 100 W busy, cubic law, floor 0.5. A phase
// of T in [1, 2] costs 100 / T^2 (the slowest at 1/T) + 12.5 (the other at the floor: 0.5 s x 2 at 100 x 0.125 W);
// the least is 37.5 J at T = 2. Within 20%: 100 / T^2 + 12.5 = 45, T = sqrt(100 / 32.5).
TEST(StepFrequency, ShortestStepWithinXPercentOfTheLeastEnergyClosedForm) {
  const std::vector<StepWorker> w{worker(1.0, 0, 100, 0), worker(0.5, 0, 100, 0)};
  const StepFrequencies f = choose_step_frequencies(w, 0.0, model(Kind::kEnergyWithin, 20));
  const double t = std::sqrt(100.0 / 32.5);
  EXPECT_NEAR(f.compute_phase_s, t, 1e-9);
  ASSERT_EQ(f.frequency.size(), 2u);
  EXPECT_NEAR(f.frequency[0], 1.0 / t, 1e-9);
  EXPECT_DOUBLE_EQ(f.frequency[1], 0.5);
  EXPECT_NEAR(f.energy_j, 45.0, 1e-6);
  EXPECT_NEAR(f.least_energy_j, 37.5, 1e-6);
}

// The same within 10% of the shortest time: the phase may last 1.1 s, the energy falls all the way.
TEST(StepFrequency, LeastEnergyWithinYPercentOfTheShortestTimeClosedForm) {
  const std::vector<StepWorker> w{worker(1.0, 0, 100, 0), worker(0.5, 0, 100, 0)};
  const StepFrequencies f = choose_step_frequencies(w, 0.0, model(Kind::kTimeWithin, 10));
  EXPECT_NEAR(f.compute_phase_s, 1.1, 1e-9);
  EXPECT_NEAR(f.frequency[0], 1.0 / 1.1, 1e-9);
  EXPECT_DOUBLE_EQ(f.frequency[1], 0.5);
  EXPECT_NEAR(f.energy_j, 100.0 / 1.21 + 12.5, 1e-6);
}

// Within 0% of the shortest time, with waiting at idle power or more, the rule is slow_with_slack's: the slowest at
// full speed, every other one arriving with it (above the floor).
TEST(StepFrequency, TimeWithinZeroIsTheSlackRule) {
  const std::vector<StepWorker> w{worker(2.0, 10, 100, 10), worker(1.5, 10, 100, 10), worker(0.6, 10, 100, 100)};
  const StepFrequencies f = choose_step_frequencies(w, 5.0, model(Kind::kTimeWithin, 0));
  EXPECT_DOUBLE_EQ(f.compute_phase_s, 2.0);
  EXPECT_DOUBLE_EQ(f.frequency[0], 1.0);
  EXPECT_DOUBLE_EQ(f.frequency[1], slack_frequency(1.5, 0.5, 0.5));
  EXPECT_DOUBLE_EQ(f.frequency[2], slack_frequency(0.6, 1.4, 0.5));
}

// A generous energy bound keeps the shortest step.
TEST(StepFrequency, LargeEnergyBoundKeepsTheShortestStep) {
  const std::vector<StepWorker> w{worker(1.0, 0, 100, 0), worker(0.5, 0, 100, 0)};
  const StepFrequencies f = choose_step_frequencies(w, 0.0, model(Kind::kEnergyWithin, 1000));
  EXPECT_DOUBLE_EQ(f.compute_phase_s, 1.0);
  EXPECT_DOUBLE_EQ(f.frequency[0], 1.0);
  EXPECT_DOUBLE_EQ(f.frequency[1], 0.5);
}

// One worker, 1 s at full speed, 10 W idle, 100 W busy, floor 0.2: a phase of T costs 10 T + 90 / T^2, least at
// T = (2 x 90 / 10)^(1/3) = 18^(1/3): slowing further costs more idle power than it saves.
TEST(StepFrequency, LeastEnergyStopsWhereIdlePowerOutweighsTheSaving) {
  const StepFrequencies f =
      choose_step_frequencies({worker(1.0, 10, 100, 10)}, 0.0, model(Kind::kEnergyWithin, 0, /*min_frequency=*/0.2));
  const double t = std::cbrt(18.0);
  EXPECT_NEAR(f.compute_phase_s, t, 1e-4);
  EXPECT_NEAR(f.frequency[0], 1.0 / t, 1e-4);
  EXPECT_NEAR(f.energy_j, 10.0 * t + 90.0 / (t * t), 1e-9);
}

// Waiting below idle power (a worker that powers down while it waits): a worker with slack computes at
// f^3 = (idle - wait) / (2 (busy - idle)) rather than as slowly as the phase allows.
TEST(StepFrequency, WaitingBelowIdleGivesTheInteriorFactor) {
  const std::vector<StepWorker> w{worker(1.0, 30, 100, 0), worker(0.5, 30, 100, 0)};
  const StepFrequencies f = choose_step_frequencies(w, 0.0, model(Kind::kTimeWithin, 0));
  EXPECT_DOUBLE_EQ(f.frequency[0], 1.0);
  EXPECT_NEAR(f.frequency[1], std::cbrt(30.0 / 140.0), 1e-12);
}

// What the others draw counts: 1 kW outside the step makes every stretch cost more than it saves.
TEST(StepFrequency, PowerOutsideTheStepMakesStretchingCostly) {
  const std::vector<StepWorker> w{worker(1.0, 0, 100, 0), worker(0.5, 0, 100, 0)};
  const StepFrequencies f = choose_step_frequencies(w, 1000.0, model(Kind::kEnergyWithin, 0));
  EXPECT_DOUBLE_EQ(f.compute_phase_s, 1.0);
  EXPECT_DOUBLE_EQ(f.frequency[0], 1.0);
}

// The meter charges a record slowed by the driver at idle + (busy - idle) f^3 over its (slowed) compute time.
TEST(StepFrequency, MeterChargesTheRecordsFactor) {
  scenarios::DevicePower d;
  d.idle_w = 10.0, d.busy_w = 90.0;
  EnergyMeter m(scenarios::EnergySpec{}, {WorkerPower{d, 1.0, false, {}, {}, {}}});
  IterationRecord r;
  r.worker = 0, r.compute_s = 2.0, r.batch = 8, r.frequency = 0.5;
  m.iteration(r);
  EXPECT_DOUBLE_EQ(m.summary(2.0, std::nullopt, std::nullopt).compute_j, 2.0 * (10.0 + 80.0 * 0.125));
}

// Measured states: two GPUs, 0 W waiting; the fast one (1 s) has a state 1.5x slower at 40 W (60 J against 100 J at
// full speed), the slow one (2 s) none. With 0% more time the fast one takes its state (1.5 s <= 2 s): a measured
// state, never a law factor between.
TEST(StepFrequency, MeasuredStatesOnlyAmongTheirOwnEnds) {
  StepWorker fast = worker(1.0, 10, 100, 0), slow = worker(2.0, 10, 100, 0);
  fast.states = {PowerState{1.5, 40.0, 150.0}, PowerState{3.0, 30.0, 100.0}};
  slow.states = {PowerState{1.2, 90.0, 150.0}};
  const StepFrequencies f = choose_step_frequencies({fast, slow}, 0.0, model(Kind::kTimeWithin, 0));
  EXPECT_DOUBLE_EQ(f.compute_phase_s, 2.0);
  EXPECT_EQ(f.state, (std::vector<int>{0, -1}));
  EXPECT_DOUBLE_EQ(f.frequency[0], 1.0 / 1.5);
  EXPECT_DOUBLE_EQ(f.frequency[1], 1.0);
  EXPECT_DOUBLE_EQ(f.energy_j, 1.5 * 40.0 + 2.0 * 100.0);
  // Within 50% the phase may reach 3 s; the candidates are the states' ends from 2 s (2, 2.4, 3). Every one costs
  // 260 J: the fast one keeps its 1.5x state (its 3x one is 90 J), the slow one full speed (its 1.2x one is 216 J
  // against 200 J). A tie keeps the shortest.
  const StepFrequencies g = choose_step_frequencies({fast, slow}, 0.0, model(Kind::kTimeWithin, 50));
  EXPECT_EQ(g.state, (std::vector<int>{0, -1}));
  EXPECT_DOUBLE_EQ(g.compute_phase_s, 2.0);
  // slow_with_slack in states: the least-energy state that ends within the slack; none fits 0.2 s of slack.
  EXPECT_EQ(slack_state(fast, 1.0), 0);
  EXPECT_EQ(slack_state(fast, 0.2), -1);
  EXPECT_EQ(slack_state(fast, 0.0), -1);
}

// The previous-step rule: step s's decision reads only the times of steps before s. Changing step s's own time
// leaves its decision unchanged; changing step s-1's changes it.
TEST(StepFrequency, PreviousStepRuleReadsOnlyEarlierSteps) {
  scenarios::EnergySpec m;
  m.slow_with_slack = true;
  m.slowing_decision = scenarios::SlowingDecision::kPrevious;
  const auto decisions = [&](const std::vector<std::vector<double>>& times) {
    StepTimePredictor p(2);
    std::vector<std::vector<double>> out;
    for (const std::vector<double>& step : times) {
      std::vector<StepWorker> predicted;
      for (std::size_t k = 0; k < step.size(); ++k) {
        predicted.push_back(worker(p.has(k) ? p.predict(k, 10.0) : 0.0, 10, 100, 10));
      }
      out.push_back(decide_step(predicted, 0.0, m).frequency);
      for (std::size_t k = 0; k < step.size(); ++k) p.observe(k, 10.0, step[k]);
    }
    return out;
  };
  const auto base = decisions({{1.0, 2.0}, {1.0, 2.0}, {1.0, 2.0}});
  EXPECT_EQ(base[0], (std::vector<double>{1.0, 1.0}));  // nothing measured yet: full speed
  EXPECT_EQ(base[1], (std::vector<double>{0.5, 1.0}));  // 1 s against 2 s: half speed
  EXPECT_EQ(decisions({{1.0, 2.0}, {1.0, 2.0}, {1.6, 2.0}}), base);  // the current step's time changed
  EXPECT_NE(decisions({{1.0, 2.0}, {1.6, 2.0}, {1.0, 2.0}})[2], base[2]);  // the previous one's
  // The law decided on earlier steps is a discrete state: its factor rounded up to the 5% grid.
  const auto odd = decisions({{1.3, 2.0}, {1.3, 2.0}});
  EXPECT_NEAR(odd[1][0], 0.65, 1e-12);
  EXPECT_NEAR(law_state(0.61, 0.5), 0.65, 1e-12);
  EXPECT_DOUBLE_EQ(law_state(0.3, 0.5), 0.5);
  EXPECT_NEAR(law_state(0.65, 0.5), 0.65, 1e-12);
}

// The predictor: seconds per sample, weighted 0.3 on the newest, times the batch now; the spread of its relative
// errors likewise.
TEST(StepFrequency, PredictorWeightsTheNewestStepAndScalesByTheBatch) {
  StepTimePredictor p(1);
  EXPECT_FALSE(p.has(0));
  p.observe(0, 10.0, 1.0);
  EXPECT_DOUBLE_EQ(p.predict(0, 20.0), 2.0);
  EXPECT_DOUBLE_EQ(p.spread(0), 0.0);
  p.observe(0, 10.0, 2.0);  // twice the prediction: a relative error of 1
  EXPECT_NEAR(p.predict(0, 10.0), 1.3, 1e-12);
  EXPECT_NEAR(p.spread(0), std::sqrt(0.3), 1e-12);
}

// The guard: with a spread of 10% on both, the worker with slack decides as if it computed 1.2 x sqrt(0.02) longer:
// 1.170 s against the slowest's 2 s, f = 0.585, the state 0.6 (0.5 without spread).
TEST(StepFrequency, DecisionsOnPredictionsKeepAGuardForTheirSpread) {
  scenarios::EnergySpec m;
  m.slow_with_slack = true;
  StepWorker fast = worker(1.0, 10, 100, 10), slow = worker(2.0, 10, 100, 10);
  EXPECT_DOUBLE_EQ(decide_step({fast, slow}, 0.0, m).frequency[0], 0.5);
  fast.spread = slow.spread = 0.1;
  const StepFrequencies f = decide_step({fast, slow}, 0.0, m);
  EXPECT_NEAR(f.frequency[0], 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(f.frequency[1], 1.0);
}

}  // namespace
}  // namespace omnilearn::run

namespace omnilearn::run {
namespace {

// A platform file's host figures (SimGrid's wattage_per_state): the power state's idle and last (all cores) value,
// shared among the host's workers; malformed properties are errors naming the host and the property.
TEST(HostWattage, PowerStateFiguresAndErrors) {
  HostWattage h{"alpha", "10:100, 5:7:50", "2", /*pstate=*/1, /*pstates=*/2, /*workers=*/2, {}};
  auto d = host_wattage_power(h);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_DOUBLE_EQ(*d->idle_w, 2.5);
  EXPECT_DOUBLE_EQ(*d->busy_w, 25.0);
  EXPECT_DOUBLE_EQ(*d->off_w, 1.0);
  h.pstates = 3;
  auto count = host_wattage_power(h);
  ASSERT_FALSE(count.is_ok());
  EXPECT_NE(count.status().message().find("host 'alpha': property wattage_per_state '10:100, 5:7:50' has 2 power "
                                          "states, the host 3"),
            std::string::npos)
      << count.status().message();
  h.pstates = 2, h.per_state = "10:100, 5";
  auto short_state = host_wattage_power(h);
  ASSERT_FALSE(short_state.is_ok());
  EXPECT_NE(short_state.status().message().find("power state 1 is ' 5'"), std::string::npos)
      << short_state.status().message();
  h.per_state.clear(), h.off = "-1";
  auto off = host_wattage_power(h);
  ASSERT_FALSE(off.is_ok());
  EXPECT_NE(off.status().message().find("host 'alpha': property wattage_off '-1'"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::run
