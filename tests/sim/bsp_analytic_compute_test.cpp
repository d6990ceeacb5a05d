// Coordinator mode computes each worker's computation end itself (analytic_compute.h) instead of running a SimGrid
// activity: the ends match hand-computed ones and the per-worker actors' activities, through speed changes, downs,
// repeating traces and epoch power states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::phase;
using testing::read_csv;
using testing::read_text;
using testing::run_in_child;
using testing::test_dir;


// A fast and a slow worker (12 and 6 cores), fixed equal batches, ten steps.
scenarios::Scenario two_workers() {
  auto s = four_worker_scenario({12, 6}, "uniform");
  s.workload.dataset_samples = 128 * 10;
  return s;
}

SimOptions mode(SimOptions::BspActors actors) {
  SimOptions o;
  o.flow_allreduce_max_workers = 0;  // the analytic all-reduce in both modes
  o.bsp_actors = actors;
  return o;
}
const SimOptions kCoordinator = mode(SimOptions::BspActors::kCoordinator);
const SimOptions kPerWorker = mode(SimOptions::BspActors::kPerWorker);

struct Row {
  double start_s = 0.0, compute_s = 0.0;
  long batch = 0;
};
Row row(const std::string& dir, int worker, int step) {
  for (const auto& r : read_csv(dir + "/iterations.csv")) {
    if (r.at("worker") == std::to_string(worker) && r.at("step") == std::to_string(step)) {
      return {std::stod(r.at("start_s")), std::stod(r.at("compute_s")), std::stol(r.at("batch"))};
    }
  }
  ADD_FAILURE() << "no row for worker " << worker << ", step " << step << " in " << dir;
  return {};
}

// The run with per-worker actors (SimGrid activities) writes the same files.
void expect_same_as_per_worker(const scenarios::Scenario& s, const std::string& coordinated) {
  const std::string actors = coordinated + "-actors";
  std::filesystem::remove_all(actors);
  ASSERT_EQ(run_in_child(s, actors, kPerWorker), "");
  for (const char* file : {"iterations.csv", "plans.csv", "availability.csv", "summary.json"}) {
    EXPECT_EQ(read_text(coordinated + "/" + file), read_text(actors + "/" + file)) << file;
  }
}

TEST(BspAnalyticCompute, ASpeedChangeMidStepGivesTheIntegratedEnd) {
  auto s = two_workers();
  const std::string steady = test_dir("steady");
  ASSERT_EQ(run_in_child(s, steady, kCoordinator), "");
  const Row before = row(steady, 0, 3);
  ASSERT_GT(before.compute_s, 0.0);
  // Worker 0 drops to half speed a quarter into step 3: the other three quarters take twice as long.
  const double at = before.start_s + 0.25 * before.compute_s;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1}), phase(at, {0.5, 1})};
  const std::string dir = test_dir("slowed");
  ASSERT_EQ(run_in_child(s, dir, kCoordinator), "");
  const Row slowed = row(dir, 0, 3);
  EXPECT_EQ(slowed.start_s, before.start_s);
  EXPECT_NEAR(slowed.compute_s, 0.25 * before.compute_s + 2.0 * 0.75 * before.compute_s, 1e-12 * before.compute_s);
  EXPECT_EQ(slowed.batch, before.batch);
  EXPECT_NEAR(row(dir, 0, 4).compute_s, 2.0 * before.compute_s, 1e-12 * before.compute_s);
  expect_same_as_per_worker(s, dir);
}

TEST(BspAnalyticCompute, AWorkerThatGoesDownMidStepLosesItsIterationThen) {
  auto s = two_workers();
  const std::string steady = test_dir("steady");
  ASSERT_EQ(run_in_child(s, steady, kCoordinator), "");
  const Row before = row(steady, 1, 3);
  // The slow worker goes down 60% into step 3 (after the fast one is done) and comes back much later.
  const double down = before.start_s + 0.6 * before.compute_s;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1}), phase(down, {1, 0}), phase(down + 20 * before.compute_s, {1, 1})};
  const std::string dir = test_dir("down");
  ASSERT_EQ(run_in_child(s, dir, kCoordinator), "");
  const Row lost = row(dir, 1, 3);
  EXPECT_EQ(lost.batch, 0);  // an aborted iteration processed nothing
  EXPECT_EQ(lost.start_s, before.start_s);
  EXPECT_NEAR(lost.compute_s, down - before.start_s, 1e-12 * down);
  const Row kept = row(dir, 0, 3);
  EXPECT_GT(kept.batch, 0);
  EXPECT_EQ(kept.compute_s, row(steady, 0, 3).compute_s);
  // The step ends when the fast worker is done and the slow one is gone, not when the slow one would have ended.
  EXPECT_LT(row(dir, 0, 4).start_s, row(steady, 0, 4).start_s);
  expect_same_as_per_worker(s, dir);
}

TEST(BspAnalyticCompute, EpochSchedulesComputeAtTheirPowerStates) {
  auto s = two_workers();
  s.workload.epochs = 3;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kEpochs;
  s.availability.phases = {phase(0, {1, 1}), phase(1, {0.25, 1}), phase(2, {1, 0.5})};
  const std::string dir = test_dir("epochs");
  ASSERT_EQ(run_in_child(s, dir, kCoordinator), "");
  const double c0 = row(dir, 0, 2).compute_s, c1 = row(dir, 1, 2).compute_s;
  EXPECT_NEAR(row(dir, 0, 12).compute_s, 4.0 * c0, 1e-12 * c0);
  EXPECT_NEAR(row(dir, 1, 12).compute_s, c1, 1e-12 * c1);
  EXPECT_NEAR(row(dir, 0, 22).compute_s, c0, 1e-12 * c0);
  EXPECT_NEAR(row(dir, 1, 22).compute_s, 2.0 * c1, 1e-12 * c1);
  expect_same_as_per_worker(s, dir);
}

// The same rows, times within `slack_s` plus a relative 1e-9 (every other cell exact), and the same plans.
void expect_rows_within(const std::string& a, const std::string& b, double slack_s) {
  const auto ra = read_csv(a + "/iterations.csv"), rb = read_csv(b + "/iterations.csv");
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    for (const auto& [column, cell] : ra[i]) {
      if (column.size() > 2 && column.substr(column.size() - 2) == "_s") {
        const double x = std::stod(cell), y = std::stod(rb[i].at(column));
        EXPECT_NEAR(x, y, slack_s + 1e-9 * std::max(std::abs(x), std::abs(y))) << "row " << i << ", " << column;
      } else {
        EXPECT_EQ(cell, rb[i].at(column)) << "row " << i << ", " << column;
      }
    }
  }
  for (const char* file : {"plans.csv", "availability.csv"}) {
    EXPECT_EQ(read_text(a + "/" + file), read_text(b + "/" + file)) << file;
  }
}

TEST(BspAnalyticCompute, ARepeatingTraceGivesTheActivitiesEnds) {
  // Changes at awkward times that repeat with an awkward period: SimGrid dates each repeat's changes by adding
  // gaps, not at the trace's times plus whole periods, and the analytic ends follow its dates.
  const std::string dir = test_dir("repeat");
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/../repeat.csv";
  std::ofstream(trace) << "# loop_after_s=3.3\ntime_s,worker,fraction\n0,a,1\n0.7,a,0.45\n1.9,a,1\n2.95,a,0.8\n"
                          "0,b,1\n1.1,b,0\n1.45,b,0.6\n2.2,b,1\n";
  auto s = four_worker_scenario({12, 6, 8, 16}, "omnilearn");
  s.workload.global_batch = 256;
  s.workload.dataset_samples = 256 * 40;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kTrace;
  s.availability.trace.path = trace;
  s.availability.trace.nodes = {"a", "b", "b", "a"};
  s.availability.trace.time_scale = 0.37;
  ASSERT_EQ(run_in_child(s, dir + "/run", kCoordinator), "");
  int lost = 0;
  for (const auto& r : read_csv(dir + "/run/iterations.csv")) lost += r.at("batch") == "0";
  EXPECT_GT(lost, 0);
  // Not byte-identical: where two workers (here 1 and 2, one trace node) go down at once, SimGrid can wake the
  // availability actor an ulp before their time; its next sleep_until then lasts surf/precision (1e-9 s), so the
  // activity of the second is cancelled 1e-9 s late. The analytic path aborts both at the announced time.
  ASSERT_EQ(run_in_child(s, dir + "/actors", kPerWorker), "");
  expect_rows_within(dir + "/run", dir + "/actors", 2e-9);
}

TEST(BspAnalyticCompute, SettingsOfTheCpuModelKeepTheActivities) {
  // The analytic ends repeat SimGrid's default CPU model; under another update scheme the coordinator's steppers
  // run activities, which give the per-worker actors' rows.
  auto s = two_workers();
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1}), phase(3.3, {0.5, 1}), phase(5.1, {1, 0}), phase(9.7, {1, 1})};
  SimOptions full = kCoordinator;
  full.simgrid_args.push_back("--cfg=cpu/optim:Full");
  const std::string dir = test_dir("full");
  ASSERT_EQ(run_in_child(s, dir, full), "");
  SimOptions actors = kPerWorker;
  actors.simgrid_args = full.simgrid_args;
  const std::string per_worker = test_dir("full-actors");
  ASSERT_EQ(run_in_child(s, per_worker, actors), "");
  for (const char* file : {"iterations.csv", "plans.csv", "availability.csv", "summary.json"}) {
    EXPECT_EQ(read_text(dir + "/" + file), read_text(per_worker + "/" + file)) << file;
  }
}

}  // namespace
}  // namespace omnilearn::sim
