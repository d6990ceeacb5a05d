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

// Three ASP jobs on 2 fast and 2 slow devices under LAS with short rounds, so that some are preempted (restarts >= 1):
// run twice, into folders `name`-x and `name`-y, they give the same bytes.
void expect_las_preemptions_give_the_same_bytes_twice(const std::vector<traces::JobSpec>& jobs,
                                                      const std::string& name) {
  ClusterSimOptions o;
  o.scheduler = "las";
  o.scheduling.round_s = 2;
  o.scheduling.las_thresholds = {3.0};
  o.scheduling.checkpoint_s = 0.5;
  o.scheduling.restore_s = 0.5;
  scenarios::DeviceCluster c;
  c.name = "mixed";
  c.groups = {group("fast", 1, 2), group("slow", 1, 2)};
  const std::string x = test_dir(name + "-x");
  const std::string y = test_dir(name + "-y");
  ASSERT_EQ(run_jobs(jobs, c, o, x), "");
  ASSERT_EQ(run_jobs(jobs, c, o, y), "");
  const auto rows = read_csv(x + "/jobs.csv");
  EXPECT_GE(cell(rows, "a", "restarts") + cell(rows, "b", "restarts") + cell(rows, "c", "restarts"), 1);
  for (const char* f : {"jobs.csv", "allocations.csv", "timeline.json"}) {
    EXPECT_FALSE(read_text(x + "/" + f).empty()) << f;
    EXPECT_EQ(read_text(x + "/" + f), read_text(y + "/" + f)) << f;
  }
}

// The three jobs of those runs.
std::vector<traces::JobSpec> three_asp_jobs() {
  return {asp_job("a", 0, 2, 9600, 64), asp_job("b", 1, 2, 6400, 64), asp_job("c", 3, 3, 6400, 96)};
}

TEST(ClusterAsp, LasPreemptingAspJobsGivesTheSameBytesTwice) {
  expect_las_preemptions_give_the_same_bytes_twice(three_asp_jobs(), "asp-las");
}

// The job of TwoWorkersOfDifferentKinds... under `rule` (its asp_rule).
std::string run_two_kinds(const std::string& rule, const std::string& dir) {
  scenarios::DeviceCluster c;
  c.name = "two";
  c.groups = {group("fast", 1, 1), group("slow", 1, 1)};
  traces::JobSpec j = asp_job("a", 0, 2, 3200, 64);
  j.asp_rule = rule;
  return run_jobs({j}, c, {}, dir);
}

TEST(ClusterAsp, RingmasterDropsTheSlowWorkersStalePushes) {
  // As TwoWorkersOfDifferentKinds: worker 0 pushes at 0.1 i, worker 1 at 0.3 + 0.4 i. Between worker 1's pull and
  // its push worker 0 updates at least twice, so with R = 1 every push of worker 1 is dropped; worker 0's pushes
  // then meet no other update (staleness 0) and are all applied. A dropped push is no progress: the job's 3,200
  // samples are worker 0's 100 updates of 32, the 100th at 10 s (asgd's 100th push, counting both workers', comes
  // at 8 s); meanwhile worker 1 pushed 25 times (0.3 + 0.4 i, i = 0..24), all dropped.
  const std::string dir = test_dir("asp-ringmaster");
  ASSERT_EQ(run_two_kinds("ringmaster:1", dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), nth_update({0.1}, {0.1}, 100), 1e-9);
  EXPECT_NEAR(cell(rows, "a", "end_s"), 10.0, 1e-9);
  EXPECT_GT(cell(rows, "a", "end_s"), nth_update({0.1, 0.3}, {0.1, 0.4}, 100) + 1.0);
  EXPECT_EQ(cell(rows, "a", "steps"), 100);
  EXPECT_EQ(cell(rows, "a", "samples"), 3200);
  EXPECT_EQ(cell(rows, "a", "dropped_pushes"), 25);
  EXPECT_EQ(rows.at(0).at("asp_rule"), "ringmaster:1");
  // R = inf drops nothing: asgd's updates.
  const std::string none = test_dir("asp-ringmaster-inf");
  ASSERT_EQ(run_two_kinds("ringmaster:inf", none), "");
  EXPECT_EQ(cell(read_csv(none + "/jobs.csv"), "a", "steps"), 100);
  EXPECT_EQ(cell(read_csv(none + "/jobs.csv"), "a", "dropped_pushes"), 0);
}

TEST(ClusterAsp, SspWithBoundZeroRunsInLockStep) {
  // s = 0: a worker may not start iteration c + 1 before the other finished iteration c. Worker 0 (0.1 s, on the
  // server's node) pushes at 0.1 and waits for worker 1's push at 0.3; both go on at once: worker 0 pushes at 0.4
  // and waits, worker 1 (pull 0.1, compute 0.2, push 0.1) pushes at 0.7, and so on. Worker 0 updates at 0.1, then
  // 0.4 + 0.4 i; worker 1 at 0.3 + 0.4 i: after the first, the 99th of the merged rest ends the job, at 19.9 s.
  const std::string dir = test_dir("asp-ssp0");
  ASSERT_EQ(run_two_kinds("ssp:0", dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), nth_update({0.4, 0.3}, {0.4, 0.4}, 99), 1e-9);
  EXPECT_NEAR(cell(rows, "a", "end_s"), 19.9, 1e-9);
  EXPECT_EQ(cell(rows, "a", "steps"), 100);
  EXPECT_EQ(cell(rows, "a", "dropped_pushes"), 0);
  // A bound the fast worker never reaches is asgd.
  const std::string loose = test_dir("asp-ssp-loose");
  ASSERT_EQ(run_two_kinds("ssp:1000", loose), "");
  EXPECT_NEAR(cell(read_csv(loose + "/jobs.csv"), "a", "end_s"), nth_update({0.1, 0.3}, {0.1, 0.4}, 100), 1e-9);
}

TEST(ClusterAsp, ABadRuleNamesTheJob) {
  EXPECT_EQ(run_two_kinds("ssp", test_dir("asp-bad-rule")),
            "job 'a': asp_rule 'ssp': expected ssp:N with a whole N in [0, 1000000]");
  EXPECT_NE(run_two_kinds("hogwild", test_dir("asp-bad-rule-2")).find("job 'a': asp_rule 'hogwild': unknown rule"),
            std::string::npos);
}

TEST(ClusterAsp, RulesUnderLasPreemptionsGiveTheSameBytesTwice) {
  std::vector<traces::JobSpec> jobs = three_asp_jobs();
  jobs[0].asp_rule = "ssp:1";
  jobs[1].asp_rule = "ringmaster:2";
  jobs[2].asp_rule = "staleness-aware";
  expect_las_preemptions_give_the_same_bytes_twice(jobs, "asp-rules");
}

}  // namespace
}  // namespace omnilearn::sim
