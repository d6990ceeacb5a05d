// ASP jobs in the multi-job simulator: each worker computes, pushes its gradient to the parameter server on the
// node of the job's first device and pulls the parameters back; the job ends at the update that completes its
// samples. Hand-merged update sequences, one worker as plain compute, and the same bytes under LAS preemptions.
// Each run forks (one SimGrid engine per process).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "omnilearn/sim/cluster_simulation.h"
#include "cluster_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::CsvRow;
using testing::read_csv;
using testing::read_text;
using testing::test_dir;

using testing::cell;
using testing::group;

traces::JobSpec asp_job(const std::string& name, double arrival_s, std::int64_t workers, std::int64_t samples,
                        std::int64_t global_batch) {
  traces::JobSpec j = testing::job(name, arrival_s, workers, samples, global_batch);
  j.mode = traces::JobMode::kAsp;
  return j;
}

std::string run_jobs(const std::vector<traces::JobSpec>& jobs, const scenarios::DeviceCluster& c,
                     ClusterSimOptions options, const std::string& dir) {
  // 25 M parameters: a gradient of 1e8 bytes, 0.1 s over a 1e9 B/s link.
  options.model_parameters["resnet18"] = 25e6;
  return testing::run_jobs(jobs, c, std::move(options), dir);
}

// The time of the `updates`-th update when worker k's updates fall at first[k] + i x period[k], i = 0, 1, ...
double nth_update(const std::vector<double>& first, const std::vector<double>& period, int updates) {
  std::vector<double> times;
  for (std::size_t k = 0; k < first.size(); ++k) {
    for (int i = 0; i < updates; ++i) times.push_back(first[k] + i * period[k]);
  }
  std::sort(times.begin(), times.end());
  return times[static_cast<std::size_t>(updates - 1)];
}

TEST(ClusterAsp, OneWorkerIsPlainCompute) {
  scenarios::DeviceCluster c;
  c.name = "one";
  c.groups = {group("fast", 1, 1)};
  const std::string dir = test_dir("asp-one");
  ASSERT_EQ(run_jobs({asp_job("a", 0, 1, 3200, 32)}, c, {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), 10.0, 1e-9);
  EXPECT_EQ(cell(rows, "a", "steps"), 100);
}

TEST(ClusterAsp, TwoWorkersOfDifferentKindsEndWhereTheirMergedUpdatesSay) {
  // The server is on the fast node (the job's first device), where worker 0 updates every 32/320 = 0.1 s with no
  // flow. Worker 1 on the slow node computes 0.2 s, pushes 0.1 s, pulls 0.1 s: updates at 0.3 + 0.4 i.
  scenarios::DeviceCluster c;
  c.name = "two";
  c.groups = {group("fast", 1, 1), group("slow", 1, 1)};
  const std::string dir = test_dir("asp-two");
  ASSERT_EQ(run_jobs({asp_job("a", 0, 2, 3200, 64)}, c, {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), nth_update({0.1, 0.3}, {0.1, 0.4}, 100), 1e-9);
  EXPECT_EQ(cell(rows, "a", "steps"), 100);
}

TEST(ClusterAsp, TwoRemoteWorkersSharingLinksMatchAHandComputation) {
  // The server's node holds one fast device (worker 0, no flows); workers 1 and 2 share the other node's link:
  // both compute 0.1 s, then push together (2e8 bytes over 1e9 B/s: 0.2 s), then pull together (0.2 s): updates at
  // 0.3 + 0.5 i each, worker 1 first at each instant.
  scenarios::DeviceCluster c;
  c.name = "shared";
  c.groups = {group("fast", 1, 1), group("fast", 1, 2)};
  const std::string dir = test_dir("asp-shared");
  ASSERT_EQ(run_jobs({asp_job("a", 0, 3, 3200, 96)}, c, {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), nth_update({0.1, 0.3, 0.3}, {0.1, 0.5, 0.5}, 100), 1e-9);
  EXPECT_EQ(cell(rows, "a", "steps"), 100);
}

TEST(ClusterAsp, LasPreemptingAspJobsGivesTheSameBytesTwice) {
  ClusterSimOptions o;
  o.scheduler = "las";
  o.scheduling.round_s = 2;
  o.scheduling.las_thresholds = {3.0};
  o.scheduling.checkpoint_s = 0.5;
  o.scheduling.restore_s = 0.5;
  scenarios::DeviceCluster c;
  c.name = "mixed";
  c.groups = {group("fast", 1, 2), group("slow", 1, 2)};
  const std::vector<traces::JobSpec> jobs = {asp_job("a", 0, 2, 9600, 64), asp_job("b", 1, 2, 6400, 64),
                                             asp_job("c", 3, 3, 6400, 96)};
  const std::string x = test_dir("asp-las-x");
  const std::string y = test_dir("asp-las-y");
  ASSERT_EQ(run_jobs(jobs, c, o, x), "");
  ASSERT_EQ(run_jobs(jobs, c, o, y), "");
  const auto rows = read_csv(x + "/jobs.csv");
  EXPECT_GE(cell(rows, "a", "restarts") + cell(rows, "b", "restarts") + cell(rows, "c", "restarts"), 1);
  for (const char* f : {"jobs.csv", "allocations.csv", "timeline.json"}) {
    EXPECT_FALSE(read_text(x + "/" + f).empty()) << f;
    EXPECT_EQ(read_text(x + "/" + f), read_text(y + "/" + f)) << f;
  }
}

}  // namespace
}  // namespace omnilearn::sim
