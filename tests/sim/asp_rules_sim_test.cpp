// workload.asp in the simulator (time only): SSP's bound holds a worker until the slowest catches up (s = 0: a
// synchronous round), pull: per-epoch holds every reply at an epoch's end until each worker has pushed and sends
// no parameters between barriers, Ringmaster drops pushes more than R stale (R = inf: ASGD exactly), on the flows'
// path and the server link's analytic one, also with a worker that goes down.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::phase;
using testing::read_csv;
using testing::read_text;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

// Four unequal ASP workers (2/4/6/16 cores), 20 steps' worth of samples per epoch, two epochs.
scenarios::Scenario asp_scenario() {
  auto s = four_worker_scenario({2, 4, 6, 16}, "uniform");
  s.mode = controller::TrainingMode::kAsp;
  s.workload.dataset_samples = 128 * 20;
  s.workload.epochs = 2;
  return s;
}

scenarios::Scenario with_ssp(scenarios::Scenario s, std::int64_t bound) {
  s.workload.asp.rule = scenarios::AspRule::kSsp;
  s.workload.asp.staleness_bound = bound;
  return s;
}

struct Iteration {
  double start_s = 0.0;
  double end_s = 0.0;  // of its compute: the push leaves then
  double wait_s = 0.0;
  std::int64_t epoch = 0;
  std::int64_t staleness = 0;
};

// Each worker's iterations, in its order.
std::vector<std::vector<Iteration>> iterations_by_worker(const std::string& dir, std::size_t workers) {
  std::vector<std::vector<Iteration>> out(workers);
  for (const auto& r : read_csv(dir + "/iterations.csv")) {
    Iteration it;
    it.start_s = std::stod(r.at("start_s"));
    it.end_s = it.start_s + std::stod(r.at("compute_s"));
    it.wait_s = std::stod(r.at("wait_s"));
    it.epoch = std::stoll(r.at("epoch"));
    it.staleness = std::stoll(r.at("staleness"));
    out[std::stoul(r.at("worker"))].push_back(it);
  }
  return out;
}

// SSP with bound s: no worker starts its iteration c + s + 1 before every worker has finished its iteration c.
void expect_ssp_bound(const std::vector<std::vector<Iteration>>& by_worker, std::size_t s) {
  std::size_t rounds = by_worker[0].size();
  for (const auto& w : by_worker) rounds = std::min(rounds, w.size());
  ASSERT_GT(rounds, 5u);
  for (std::size_t c = 0; c + s + 1 < rounds; ++c) {
    double finished = 0.0;
    for (const auto& w : by_worker) finished = std::max(finished, w[c].end_s);
    for (std::size_t k = 0; k < by_worker.size(); ++k) {
      EXPECT_GE(by_worker[k][c + s + 1].start_s, finished) << "worker " << k << " iteration " << c + s + 1;
    }
  }
}

TEST(AspRulesSim, SspWithBoundZeroRunsSynchronousRounds) {
  for (const int flow_max : {64, 0}) {  // the flows' path, then the server link's analytic one
    SimOptions options;
    options.asp_flow_max_workers = flow_max;
    const std::string dir = test_dir("ssp0-" + std::to_string(flow_max));
    ASSERT_EQ(run_in_child(with_ssp(asp_scenario(), 0), dir, options), "");
    const auto by_worker = iterations_by_worker(dir, 4);
    expect_ssp_bound(by_worker, 0);
    // The fast workers waited for the slow one, which never waits; nobody is more than a round stale.
    double fast_wait = 0.0;
    for (const Iteration& it : by_worker[3]) fast_wait += it.wait_s;
    EXPECT_GT(fast_wait, 0.0);
    for (const auto& w : by_worker) {
      for (const Iteration& it : w) EXPECT_LE(it.staleness, 3);
    }
  }
}

TEST(AspRulesSim, SspBoundLetsTheFastRunAheadThatFarOnly) {
  const std::string plain = test_dir("asgd"), bounded = test_dir("ssp2");
  ASSERT_EQ(run_in_child(asp_scenario(), plain), "");
  ASSERT_EQ(run_in_child(with_ssp(asp_scenario(), 2), bounded), "");
  expect_ssp_bound(iterations_by_worker(bounded, 4), 2);
  // Without a bound the 16-core worker runs far ahead of the 2-core one: the bound changes the schedule.
  const auto free = iterations_by_worker(plain, 4);
  EXPECT_GT(free[3].size(), free[0].size() + 4);
}

// pull: per-epoch (the paper's algorithm): no iteration of a new epoch starts before every iteration begun in the
// one before has finished; the epoch's decision is made then; replies between barriers carry no parameters.
TEST(AspRulesSim, PerEpochPullHoldsEveryWorkerAtTheEpochsEnd) {
  auto s = asp_scenario();
  s.workload.asp.update = scenarios::AspUpdate::kModelOverwrite;
  s.workload.asp.pull = scenarios::AspPull::kPerEpoch;
  s.workload.epochs = 3;
  s.policy.name = "omnilearn-asp";
  s.policy.trigger = controller::DecisionTrigger::kEveryEpoch;
  s.policy.dead_band = 0.2;
  for (const int flow_max : {64, 0}) {
    SimOptions options;
    options.asp_flow_max_workers = flow_max;
    const std::string dir = test_dir("paper-" + std::to_string(flow_max));
    ASSERT_EQ(run_in_child(s, dir, options), "");
    const auto rows = read_csv(dir + "/iterations.csv");
    for (std::int64_t e = 1; e < 3; ++e) {
      double before_end = 0.0, after_start = 1e300;
      int held = 0;
      for (const auto& r : rows) {
        const double start = std::stod(r.at("start_s"));
        if (std::stoll(r.at("epoch")) < e) {
          before_end = std::max(before_end, start + std::stod(r.at("compute_s")));
        } else {
          after_start = std::min(after_start, start);
        }
        held += std::stod(r.at("wait_s")) > 0.0 ? 1 : 0;
      }
      EXPECT_GE(after_start, before_end) << "epoch " << e;
      EXPECT_GE(held, 3) << "at least the three workers that were not last waited";
    }
    // Decisions only at the barriers: the initial plan, then one per epoch boundary.
    std::map<std::string, int> decisions;
    for (const auto& r : read_csv(dir + "/plans.csv")) ++decisions[r.at("time_s")];
    EXPECT_EQ(decisions.size(), 3u) << "the initial plan and the two barriers";
  }
  // A reply without parameters is a header: the round trip between barriers is far shorter than a pull's.
  auto every_push = s;
  every_push.workload.asp.pull = scenarios::AspPull::kEveryPush;
  const std::string a = test_dir("per-epoch"), b = test_dir("every-push");
  ASSERT_EQ(run_in_child(s, a), "");
  ASSERT_EQ(run_in_child(every_push, b), "");
  EXPECT_LT(testing::mean_column(read_csv(a + "/iterations.csv"), "comm_s"),
            0.75 * testing::mean_column(read_csv(b + "/iterations.csv"), "comm_s"));
}

// A worker that goes down holds nobody back, and comes back without waiting for the rounds it missed.
TEST(AspRulesSim, ADownWorkerHoldsNobodyBack) {
  for (const bool per_epoch : {false, true}) {
    auto s = with_ssp(asp_scenario(), 0);
    if (per_epoch) {
      s = asp_scenario();
      s.workload.asp.pull = scenarios::AspPull::kPerEpoch;
      s.workload.epochs = 4;
    }
    s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
    s.availability.unit = scenarios::ScheduleUnit::kSeconds;
    s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(1, {0, 1, 1, 1}), phase(3, {1, 1, 1, 1})};
    for (const int flow_max : {64, 0}) {
      SimOptions options;
      options.asp_flow_max_workers = flow_max;
      const std::string dir = test_dir(std::string(per_epoch ? "epoch-" : "ssp-") + std::to_string(flow_max));
      ASSERT_EQ(run_in_child(s, dir, options), "") << (per_epoch ? "per-epoch" : "ssp");
      const auto by_worker = iterations_by_worker(dir, 4);
      bool others_ran_meanwhile = false, back = false;
      for (const Iteration& it : by_worker[3]) others_ran_meanwhile |= it.start_s > 1.2 && it.start_s < 2.8;
      for (const Iteration& it : by_worker[0]) back |= it.start_s >= 3.0;
      EXPECT_TRUE(others_ran_meanwhile) << dir;
      EXPECT_TRUE(back) << dir;
    }
  }
}

TEST(AspRulesSim, RingmasterDropsStalePushesAndWithoutThresholdIsAsgd) {
  auto ring = asp_scenario();
  ring.workload.asp.rule = scenarios::AspRule::kRingmaster;
  ring.workload.asp.delay_threshold = 1;
  const std::string plain = test_dir("asgd"), r1 = test_dir("r1"), rinf = test_dir("rinf");
  ASSERT_EQ(run_in_child(asp_scenario(), plain), "");
  ASSERT_EQ(run_in_child(ring, r1), "");
  ring.workload.asp.delay_threshold = scenarios::kNoDelayThreshold;
  ASSERT_EQ(run_in_child(ring, rinf), "");
  EXPECT_GT(summary_number(r1, "dropped_pushes"), 0.0);
  EXPECT_EQ(summary_number(rinf, "dropped_pushes"), 0.0);
  // R = inf: the very same run as ASGD.
  EXPECT_EQ(read_text(rinf + "/iterations.csv"), read_text(plain + "/iterations.csv"));
  EXPECT_EQ(read_text(rinf + "/plans.csv"), read_text(plain + "/plans.csv"));
  // R = 1: a dropped push leaves the update count where it was: every push (a row) is an update or a drop.
  const auto rows = read_csv(r1 + "/iterations.csv");
  std::int64_t last_step = 0;
  for (const auto& r : rows) {
    last_step = std::max<std::int64_t>(last_step, std::stoll(r.at("step")));
  }
  EXPECT_EQ(static_cast<double>(last_step) + summary_number(r1, "dropped_pushes"), static_cast<double>(rows.size()));
}

TEST(AspRulesSim, RingmasterReportsWhatItsDroppedPushesCost) {
  // R = 1 with energy metered at 1 W per busy core (idle 0): a push is dropped when its row's staleness exceeds 1;
  // summary.json adds up those rows' pushes, samples, compute seconds and joules (cores x compute seconds), overall
  // and per worker.
  auto ring = asp_scenario();
  ring.workload.asp.rule = scenarios::AspRule::kRingmaster;
  ring.workload.asp.delay_threshold = 1;
  ring.energy.emplace();
  ring.energy->cpu.idle_w = 0.0, ring.energy->cpu.busy_w = 1.0;
  const std::string dir = test_dir("r1-cost");
  ASSERT_EQ(run_in_child(ring, dir), "");
  const double cores[] = {2, 4, 6, 16};
  double pushes = 0, dropped = 0, samples = 0, compute_s = 0, dropped_s = 0, joules = 0, dropped_j = 0;
  std::map<int, std::pair<double, double>> by_worker;  // worker -> (pushes, dropped)
  for (const auto& r : read_csv(dir + "/iterations.csv")) {
    const int k = std::stoi(r.at("worker"));
    const double c = std::stod(r.at("compute_s"));
    const bool drop = std::stoll(r.at("staleness")) > 1;
    pushes += 1, compute_s += c, joules += cores[k] * c;
    by_worker[k].first += 1;
    if (!drop) continue;
    dropped += 1, samples += std::stod(r.at("batch")), dropped_s += c, dropped_j += cores[k] * c;
    by_worker[k].second += 1;
  }
  ASSERT_GT(dropped, 0.0);
  ASSERT_LT(dropped, pushes);
  EXPECT_EQ(summary_number(dir, "dropped_pushes"), dropped);
  EXPECT_DOUBLE_EQ(summary_number(dir, "dropped_push_fraction"), dropped / pushes);
  EXPECT_EQ(summary_number(dir, "dropped_samples"), samples);
  EXPECT_NEAR(summary_number(dir, "dropped_compute_s"), dropped_s, 1e-9 * dropped_s);
  EXPECT_NEAR(summary_number(dir, "dropped_compute_fraction"), dropped_s / compute_s, 1e-9);
  EXPECT_NEAR(summary_number(dir, "dropped_energy_j"), dropped_j, 1e-9 * dropped_j);
  EXPECT_NEAR(summary_number(dir, "dropped_energy_fraction"), dropped_j / joules, 1e-9);
  for (const auto& [k, counts] : by_worker) {
    EXPECT_DOUBLE_EQ(summary_number(dir, "asp_dropped_fraction_w" + std::to_string(k)), counts.second / counts.first)
        << "worker " << k;
  }
}

TEST(AspRulesSim, HeldRepliesRepeatThemselves) {
  auto s = with_ssp(asp_scenario(), 1);
  s.workload.asp.pull = scenarios::AspPull::kPerEpoch;
  const std::string a = test_dir("a"), b = test_dir("b");
  ASSERT_EQ(run_in_child(s, a), "");
  ASSERT_EQ(run_in_child(s, b), "");
  for (const char* f : {"iterations.csv", "plans.csv", "summary.json"}) {
    EXPECT_EQ(read_text(a + "/" + f), read_text(b + "/" + f)) << f;
  }
}

}  // namespace
}  // namespace omnilearn::sim
