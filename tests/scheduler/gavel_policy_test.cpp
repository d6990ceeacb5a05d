// Gavel: the max-min LP on a case solved by hand, and the round mechanism reaching its fractions over many rounds.
#include <gtest/gtest.h>

#include <random>

#include "omnilearn/scheduler/max_min_fairness.h"
#include "omnilearn/scheduler/round_mechanism.h"
#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

// Kinds K80 (3 devices) and V100 (1); jobs A (K80 1, V100 4 samples/s) and B (K80 1, V100 2), one worker each.
// Equal shares (3/4 K80, 1/4 V100): E_A = 7/4, E_B = 5/4. K80 never binds (3 devices, 2 jobs), so each job runs all
// the time, A on V100 for a and B for b = 1 - a: ratio_A = (1 + 3a) / (7/4), ratio_B = (2 - a) / (5/4). Equal at
// a = 9/22: both 14/11. Either job's ratio rises only by taking V100 time from the other, so this is the optimum.
MaxMinProblem hand_case() { return {{3, 1}, {1, 1}, {{1.0, 4.0}, {1.0, 2.0}}, {}}; }

TEST(MaxMinFairness, TwoJobsTwoKindsMatchTheHandComputedOptimum) {
  auto x = solve_max_min_fairness(hand_case());
  ASSERT_TRUE(x.is_ok()) << x.status().message();
  EXPECT_NEAR(x->min_ratio, 14.0 / 11.0, 1e-7);
  EXPECT_NEAR(x->x[0][1], 9.0 / 22.0, 1e-7);
  EXPECT_NEAR(x->x[0][0], 13.0 / 22.0, 1e-7);
  EXPECT_NEAR(x->x[1][1], 13.0 / 22.0, 1e-7);
  EXPECT_NEAR(x->x[1][0], 9.0 / 22.0, 1e-7);
}

TEST(MaxMinFairness, ScaleFactorsAndClosedKinds) {
  // One kind of 4 devices; a 2-worker job A and a 1-worker job B of equal speed (E = 1): ratio_A = 2 x_A,
  // ratio_B = x_B (an equal share counts devices, so a wider job needs less time for the same ratio). Both fit at
  // once: the min is B's, at most 1; the second LP then gives A all its time too.
  auto x = solve_max_min_fairness({{4}, {2, 1}, {{1.0}, {1.0}}, {}});
  ASSERT_TRUE(x.is_ok()) << x.status().message();
  EXPECT_NEAR(x->min_ratio, 1.0, 1e-7);
  EXPECT_NEAR(x->x[1][0], 1.0, 1e-7);
  EXPECT_NEAR(x->x[0][0], 1.0, 1e-7);
  // With 2 devices they share: 2 x_A + x_B <= 2; the min is largest at 2 x_A = x_B = 1.
  x = solve_max_min_fairness({{2}, {2, 1}, {{1.0}, {1.0}}, {}});
  ASSERT_TRUE(x.is_ok());
  EXPECT_NEAR(x->x[0][0], 0.5, 1e-7);
  EXPECT_NEAR(x->x[1][0], 1.0, 1e-7);
  // A kind with fewer devices than the job's workers is closed to it.
  x = solve_max_min_fairness({{1, 4}, {2}, {{9.0, 1.0}}, {}});
  ASSERT_TRUE(x.is_ok());
  EXPECT_EQ(x->x[0][0], 0.0);
  EXPECT_NEAR(x->x[0][1], 1.0, 1e-7);
}

// min_j ratio_j(x) for a problem, as the LP defines it.
double min_ratio(const MaxMinProblem& p, const std::vector<std::vector<double>>& x) {
  double all = 0.0;
  for (int c : p.capacity) all += c;
  double worst = 1e300;
  for (std::size_t j = 0; j < p.workers.size(); ++j) {
    double equal = 0.0, got = 0.0;
    for (std::size_t k = 0; k < p.capacity.size(); ++k) {
      equal += p.capacity[k] / all * p.throughput[j][k];
      got += p.workers[j] * p.throughput[j][k] * x[j][k];
    }
    worst = std::min(worst, got / equal);
  }
  return worst;
}

TEST(MaxMinFairness, NoFeasibleAllocationBeatsTheLpAndEveryJobGetsItsEqualShare) {
  const std::uint64_t seed = 424242;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    MaxMinProblem p;
    const std::size_t kinds = 1 + rng() % 3, jobs = 1 + rng() % 4;
    for (std::size_t k = 0; k < kinds; ++k) p.capacity.push_back(1 + static_cast<int>(rng() % 4));
    for (std::size_t j = 0; j < jobs; ++j) {
      p.workers.push_back(1);
      p.throughput.emplace_back();
      for (std::size_t k = 0; k < kinds; ++k) p.throughput[j].push_back(0.1 + 10.0 * u(rng));
    }
    auto lp = solve_max_min_fairness(p);
    ASSERT_TRUE(lp.is_ok()) << "seed " << seed << " trial " << trial << ": " << lp.status().message();
    // The LP's x is feasible and its ratio is what it says.
    for (std::size_t j = 0; j < jobs; ++j) {
      double row = 0.0;
      for (double v : lp->x[j]) row += v;
      EXPECT_LE(row, 1.0 + 1e-9) << "seed " << seed << " trial " << trial;
    }
    for (std::size_t k = 0; k < kinds; ++k) {
      double col = 0.0;
      for (std::size_t j = 0; j < jobs; ++j) col += lp->x[j][k];
      EXPECT_LE(col, p.capacity[k] + 1e-9) << "seed " << seed << " trial " << trial;
    }
    EXPECT_NEAR(min_ratio(p, lp->x), lp->min_ratio, 1e-9);
    // With no more jobs than devices, the equal share is feasible and gives every job a ratio of 1.
    int devices = 0;
    for (int c : p.capacity) devices += c;
    if (static_cast<int>(jobs) <= devices) {
      EXPECT_GE(lp->min_ratio, 1.0 - 1e-9) << "seed " << seed << " trial " << trial;
    }
    // Random feasible allocations never do better.
    for (int sample = 0; sample < 500; ++sample) {
      std::vector<std::vector<double>> x(jobs, std::vector<double>(kinds));
      for (auto& row : x) {
        double sum = 0.0;
        for (double& v : row) sum += (v = u(rng));
        for (double& v : row) v /= std::max(1.0, sum);
      }
      for (std::size_t k = 0; k < kinds; ++k) {
        double col = 0.0;
        for (std::size_t j = 0; j < jobs; ++j) col += x[j][k];
        for (std::size_t j = 0; j < jobs && col > p.capacity[k]; ++j) x[j][k] *= p.capacity[k] / col;
      }
      ASSERT_LE(min_ratio(p, x), lp->min_ratio + 1e-9) << "seed " << seed << " trial " << trial;
    }
  }
}

TEST(MaxMinFairness, IdenticalJobsGetEqualFractionsAndTheOptimumOfDistinctOnes) {
  // Three kinds of jobs, several of each, on two kinds of devices: the LP over classes of identical jobs gives every
  // job of a class the same fractions, and its optimum is the one of the same jobs made distinct by a hair.
  MaxMinProblem same{{3, 5}, {}, {}, {}};
  const std::vector<std::pair<int, std::vector<double>>> kinds_of_job = {
      {1, {4.0, 1.0}}, {2, {2.0, 1.5}}, {1, {1.0, 3.0}}};
  for (int copy = 0; copy < 4; ++copy) {
    for (const auto& [w, t] : kinds_of_job) same.workers.push_back(w), same.throughput.push_back(t);
  }
  MaxMinProblem distinct = same;
  for (std::size_t j = 0; j < distinct.throughput.size(); ++j) distinct.throughput[j][0] *= 1.0 + 1e-9 * (j + 1);
  auto a = solve_max_min_fairness(same);
  auto b = solve_max_min_fairness(distinct);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_EQ(a->x.size(), same.workers.size());
  for (std::size_t j = 3; j < a->x.size(); ++j) EXPECT_EQ(a->x[j], a->x[j % 3]) << "job " << j;
  EXPECT_NEAR(a->min_ratio, b->min_ratio, 1e-6);
  EXPECT_NEAR(min_ratio(same, a->x), a->min_ratio, 1e-9);
  for (std::size_t k = 0; k < 2; ++k) {  // within capacity, counting each job's workers
    double used = 0.0;
    for (std::size_t j = 0; j < a->x.size(); ++j) used += same.workers[j] * a->x[j][k];
    EXPECT_LE(used, same.capacity[k] + 1e-9);
  }
}

TEST(MaxMinFairness, BadProblemsAreRefused) {
  EXPECT_FALSE(solve_max_min_fairness({{2}, {1}, {{-1.0}}, {}}).is_ok());
  auto closed = solve_max_min_fairness({{2, 2}, {3}, {{1.0, 1.0}}, {}});
  ASSERT_FALSE(closed.is_ok());
  EXPECT_NE(closed.status().message().find("job 0: no kind has both a throughput > 0 and 3 devices"),
            std::string::npos);
  EXPECT_FALSE(solve_max_min_fairness({{2}, {1, 1}, {{1.0}}, {}}).is_ok());
}

TEST(RoundMechanism, HighestRatioOfShareToReceivedFirst) {
  // Both jobs want V100 (kind 1); A has had less of its share: A gets it, B falls back to its K80 share.
  const std::vector<int> kinds =
      assign_round({{0.5, 0.5}, {0.5, 0.5}}, {{0.5, 0.1}, {0.5, 0.4}}, {1, 1}, /*capacity=*/{3, 1});
  EXPECT_EQ(kinds, (std::vector<int>{1, 0}));
  // Never received: infinite priority; a job whose workers do not fit waits.
  EXPECT_EQ(assign_round({{0.0, 1.0}, {0.0, 1.0}}, {{0.0, 0.0}, {0.0, 0.5}}, {2, 1}, {3, 2}),
            (std::vector<int>{1, -1}));
}

RoundFacts hand_case_facts() {
  RoundFacts f;
  f.cluster.hosts = {{"k", "K80", 3}, {"v", "V100", 1}};
  f.jobs = {job("A", 0.0, 1, 1, {{"K80", 1.0}, {"V100", 4.0}}), job("B", 0.0, 1, 1, {{"K80", 1.0}, {"V100", 2.0}})};
  return f;
}

TEST(GavelPolicy, RoundsConvergeToTheLpFractions) {
  RoundFacts f = hand_case_facts();
  auto gavel = testing::make("gavel");
  const int rounds = 440;
  for (int r = 0; r < rounds; ++r) {
    const Allocation a = testing::decide_ok(*gavel, f);
    ASSERT_EQ(a.jobs.size(), 2u);
    // Every round both run, one of them on the single V100.
    ASSERT_EQ(a.jobs[0].slots.size(), 1u);
    ASSERT_EQ(a.jobs[1].slots.size(), 1u);
    EXPECT_EQ(
        testing::kinds_of(f.cluster, a.jobs[0]).count("V100") + testing::kinds_of(f.cluster, a.jobs[1]).count("V100"),
        1u);
    testing::advance(f, a, 60.0);
  }
  const double total_s = rounds * 60.0;
  EXPECT_NEAR(f.jobs[0].service_by_kind["V100"] / total_s, 9.0 / 22.0, 0.01);
  EXPECT_NEAR(f.jobs[0].service_by_kind["K80"] / total_s, 13.0 / 22.0, 0.01);
  EXPECT_NEAR(f.jobs[1].service_by_kind["V100"] / total_s, 13.0 / 22.0, 0.01);
}

TEST(GavelPolicy, AJobNoSingleKindHoldsIsRefused) {
  RoundFacts f;
  f.cluster.hosts = {{"k", "K80", 3}, {"v", "V100", 2}};
  f.jobs = {job("wide", 0.0, 4, 4, {{"K80", 1.0}, {"V100", 4.0}})};
  auto a = testing::make("gavel")->decide(f);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("job 'wide': min_workers 4 fits no single device kind"), std::string::npos)
      << a.status().message();
  // An elastic one runs at the largest size one kind holds.
  f.jobs[0].min_workers = 2;
  f.jobs[0].max_workers = 5;
  const Allocation ok = testing::decide_ok(*testing::make("gavel"), f);
  EXPECT_EQ(ok.jobs[0].slots.size(), 3u);
}

}  // namespace
}  // namespace omnilearn::scheduler
