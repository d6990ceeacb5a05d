// plan_joint against brute force on small synthetic clusters, joint_step_cost by hand, the controller's learnt
// ratios, and the errors.
#include "omnilearn/controller/joint_power_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "omnilearn/controller/joint_power_controller.h"

namespace omnilearn::controller {
namespace {

// A worker whose step at limit L takes (alpha + beta b) x (top / L)^0.6 and draws idle + (L − idle) x (0.6 + b/400),
// capped at L: slower and cheaper at lower limits, as Zeus's tables are.
WorkerPowerModel synthetic_worker(double alpha, double beta, BatchSize lo, BatchSize hi, std::vector<double> limits,
                                  double wait_w) {
  WorkerPowerModel w;
  w.lo = lo;
  w.hi = hi;
  w.wait_power_w = wait_w;
  for (const double l : limits) {
    PowerLimitCurve c;
    c.limit_w = l;
    for (BatchSize b = lo; b <= hi; ++b) {
      c.time_s.push_back((alpha + beta * static_cast<double>(b)) * std::pow(limits.back() / l, 0.6));
      c.power_w.push_back(std::min(l, wait_w + (l - wait_w) * (0.6 + static_cast<double>(b) / 400.0)));
    }
    w.limits.push_back(std::move(c));
  }
  return w;
}

// The least cost over every (batch, limit) of every worker with Σ b = total.
double brute_force(const std::vector<WorkerPowerModel>& w, BatchSize total, const JointCostOptions& o) {
  double best = INFINITY;
  std::vector<BatchSize> b(w.size());
  std::vector<std::size_t> l(w.size());
  auto limits = [&](auto&& self, std::size_t k) -> void {
    if (k == w.size()) {
      best = std::min(best, joint_step_cost(w, b, l, o)->cost);
      return;
    }
    for (l[k] = 0; l[k] < w[k].limits.size(); ++l[k]) self(self, k + 1);
  };
  auto batches = [&](auto&& self, std::size_t k, BatchSize left) -> void {
    if (k + 1 == w.size()) {
      if (left < w[k].lo || left > w[k].hi) return;
      b[k] = left;
      limits(limits, 0);
      return;
    }
    for (b[k] = w[k].lo; b[k] <= std::min(w[k].hi, left); ++b[k]) self(self, k + 1, left - b[k]);
  };
  batches(batches, 0, total);
  return best;
}

JointCostOptions options_for(const std::vector<WorkerPowerModel>& w, double eta, Seconds comm_s) {
  JointCostOptions o;
  o.eta = eta;
  o.comm_s = comm_s;
  for (const auto& x : w) o.max_power_w += x.limits.back().limit_w;
  o.coarse_step = 4;
  return o;
}

TEST(JointPowerPlan, StepCostByHand) {
  WorkerPowerModel a{1, 2, {{100.0, {1.0, 2.0}, {80.0, 90.0}}}, 10.0};
  WorkerPowerModel b{1, 1, {{200.0, {3.0}, {150.0}}}, 20.0};
  const std::vector<WorkerPowerModel> w{a, b};
  JointCostOptions o;
  o.eta = 0.25;
  o.max_power_w = 300.0;
  o.comm_s = 0.5;
  const std::vector<BatchSize> batch{2, 1};
  const std::vector<std::size_t> limit{0, 0};
  auto c = joint_step_cost(w, batch, limit, o);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->step_s, 3.5);
  // a: 90 W x 2 s + 10 W x 1.5 s; b: 150 W x 3 s + 20 W x 0.5 s.
  EXPECT_DOUBLE_EQ(c->energy_j, 180.0 + 15.0 + 450.0 + 10.0);
  EXPECT_DOUBLE_EQ(c->cost, 0.25 * 655.0 + 0.75 * 300.0 * 3.5);
  const std::vector<double> slower{2.0, 1.0};
  EXPECT_DOUBLE_EQ(joint_step_cost(w, batch, limit, o, slower)->step_s, 4.5);
}

// Table-driven: the plan's cost equals brute force's on small heterogeneous clusters, for several η and comm.
TEST(JointPowerPlan, MatchesBruteForce) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 24; ++trial) {
    std::vector<WorkerPowerModel> w;
    for (int k = 0; k < 3; ++k) {
      w.push_back(synthetic_worker(0.02 + 0.05 * u(rng), 0.002 + 0.006 * u(rng), 2 + (k == 1 ? 2 : 0), 30,
                                   {100.0 + 20.0 * k, 150.0, 200.0 + 30.0 * k}, 20.0 + 30.0 * u(rng)));
    }
    const double eta = trial % 3 == 0 ? 0.0 : (trial % 3 == 1 ? 0.5 : 1.0);
    const auto o = options_for(w, eta, 0.01 * (trial % 2));
    const BatchSize total = 36 + 4 * (trial % 5);
    auto plan = plan_joint(w, total, o);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    BatchSize sum = 0;
    for (const auto b : plan->batch) sum += b;
    EXPECT_EQ(sum, total);
    const double exact = brute_force(w, total, o);
    SCOPED_TRACE("trial " + std::to_string(trial) + " seed 7");
    EXPECT_LE(plan->predicted.cost, exact * 1.001);
    EXPECT_GE(plan->predicted.cost, exact * (1.0 - 1e-12));
  }
}

TEST(JointPowerPlan, RefusesWhatItCannotPlan) {
  auto w = std::vector<WorkerPowerModel>{synthetic_worker(0.01, 0.01, 4, 8, {100.0, 200.0}, 30.0)};
  auto o = options_for(w, 0.5, 0.0);
  EXPECT_FALSE(plan_joint(w, 9, o).is_ok());
  o.eta = 1.5;
  EXPECT_NE(plan_joint(w, 6, o).status().message().find("eta"), std::string::npos);
  o.eta = 0.5;
  w[0].limits[1].time_s.pop_back();
  EXPECT_NE(plan_joint(w, 6, o).status().message().find("worker 0 limit 1"), std::string::npos);
}

// A worker that runs 30% slower than its model: the controller learns the ratio and moves batch away from it.
TEST(JointPowerController, LearnsASlowWorker) {
  std::vector<WorkerPowerModel> w(4, synthetic_worker(0.02, 0.004, 4, 64, {100.0, 150.0, 200.0}, 30.0));
  JointControllerOptions o;
  o.cost = options_for(w, 0.5, 0.005);
  o.every_n = 5;
  auto c = JointPowerController::create(w, 96, o);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const auto first = c->current_plan().batch;
  EXPECT_EQ(first[0], first[3]);
  for (std::int64_t step = 1; step <= 40; ++step) {
    for (WorkerId k = 0; k < 4; ++k) {
      const auto& p = c->current_plan();
      const double t = w[k].limits[p.limit[k]].time_s[static_cast<std::size_t>(p.batch[k] - w[k].lo)];
      ASSERT_TRUE(c->report(k, t * (k == 3 ? 1.3 : 1.0)).is_ok());
    }
    ASSERT_TRUE(c->plan_next(step).is_ok());
  }
  EXPECT_NEAR(c->time_ratio(3), 1.3, 1e-9);
  EXPECT_NEAR(c->time_ratio(0), 1.0, 1e-9);
  EXPECT_LT(c->current_plan().batch[3], c->current_plan().batch[0]);
  EXPECT_FALSE(c->report(9, 1.0).is_ok());
  EXPECT_FALSE(c->report(0, 0.0).is_ok());
}

}  // namespace
}  // namespace omnilearn::controller
