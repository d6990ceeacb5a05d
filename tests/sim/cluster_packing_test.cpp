// Packing in the multi-job simulator: two jobs sharing a device each compute at their measured fraction of their
// speed alone, hand-computed end to end; the job left alone speeds up at the round after its partner leaves; pairs
// that do not gain are not packed; the same inputs give the same bytes. Each run forks (one SimGrid engine each).
#include <gtest/gtest.h>

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

// resnet18 at 32 with itself at 32 keeps 0.75 / 0.5 (gains); at 32 with 50 keeps 0.75 / 0.6 (gains); at 50 with
// itself keeps 0.5 / 0.5 (a sum of 1: no gain).
traces::PackedSpeedTable packed() {
  return std::move(traces::PackedSpeedTable::create({{"fast", "resnet18", 32, "resnet18", 40, 0.75, 0.5},
                                                     {"fast", "resnet18", 32, "resnet18", 50, 0.75, 0.6},
                                                     {"fast", "resnet18", 50, "resnet18", 50, 0.5, 0.5}}))
      .value();
}

// A one-worker job arriving at 0.
traces::JobSpec job(const std::string& name, std::int64_t samples, std::int64_t batch) {
  return testing::job(name, 0.0, 1, samples, batch);
}

// On one "fast" device, with packed()'s pairs when `packing`.
std::string run_jobs(const std::vector<traces::JobSpec>& jobs, bool packing, const std::string& dir) {
  static const traces::PackedSpeedTable pairs = packed();
  ClusterSimOptions options;
  options.scheduling.packing = packing;
  options.packed_speeds = &pairs;
  return testing::run_jobs(jobs, testing::cluster(1, 1), options, dir);
}

TEST(ClusterPacking, TwoPackedJobsEndAtTheHandComputedTimes) {
  // Both arrive at 0 on one device: fifo gives it to a; b (batch 40) waits, no device is free, and the pair gains
  // (0.75 + 0.5): packed. a trains at 240 samples/s, b at 160: 3200 samples each end at 3200/240 and 3200/160 s.
  const std::vector<traces::JobSpec> jobs = {job("a", 3200, 32), job("b", 3200, 40)};
  const std::string dir = test_dir("packed");
  ASSERT_EQ(run_jobs(jobs, true, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), 3200.0 / 240.0, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "end_s"), 3200.0 / 160.0, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "start_s"), 0.0, 1e-12);
  // A packed device's time counts for both jobs.
  EXPECT_NEAR(cell(rows, "b", "device_s_fast"), 20.0, 1e-9);
  const std::string allocations = read_text(dir + "/allocations.csv");
  EXPECT_EQ(allocations.substr(0, allocations.find('\n')), "time_s,job,kind,devices,packed_with");
  EXPECT_NE(allocations.find("0,a,fast,1,b\n0,b,fast,1,a\n"), std::string::npos) << allocations;
  const std::string timeline = read_text(dir + "/timeline.json");
  EXPECT_NE(timeline.find("\"running on 1 fast packed with a\""), std::string::npos) << timeline;
  // Without packing b waits for the round after a ends: a at 10 s, b from 60 s to 70 s.
  const std::string plain = test_dir("unpacked");
  ASSERT_EQ(run_jobs(jobs, false, plain), "");
  const auto alone = read_csv(plain + "/jobs.csv");
  EXPECT_NEAR(cell(alone, "a", "end_s"), 10.0, 1e-9);
  EXPECT_NEAR(cell(alone, "b", "end_s"), 70.0, 1e-9);
  EXPECT_EQ(read_text(plain + "/allocations.csv").substr(0, 27), "time_s,job,kind,devices\n0,a");
}

TEST(ClusterPacking, TheJobLeftAloneSpeedsUpAtTheRoundAfterItsPartnerLeaves) {
  // b (batch 50) keeps 0.6: 192 samples/s, 50/192 s a step. a ends at 3200/240 s; b stays at 192 until the round
  // at 60 s: 230 steps end at 59.896 s, and the step under way at the round (the 231st) keeps its speed, ending at
  // 231 x 50/192 = 60.15625 s. Then alone at 320: the 409 steps left take 409 x 50/320 s.
  const std::vector<traces::JobSpec> jobs = {job("a", 3200, 32), job("b", 32000, 50)};
  const std::string dir = test_dir("speedup");
  ASSERT_EQ(run_jobs(jobs, true, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), 3200.0 / 240.0, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "end_s"), 231.0 * 50.0 / 192.0 + 409.0 * 50.0 / 320.0, 1e-6);
  EXPECT_EQ(cell(rows, "b", "steps"), 640);
  const std::string timeline = read_text(dir + "/timeline.json");
  EXPECT_NE(timeline.find(R"("name":"running on 1 fast","ph":"X","pid":1,"tid":1,"ts":60000000.0)"), std::string::npos)
      << timeline;
}

TEST(ClusterPacking, PairsThatDoNotGainAreNotPacked) {
  // Two jobs at batch 50: 0.5 + 0.5 is no gain; b runs alone after a, from the round at 60 s.
  const std::vector<traces::JobSpec> jobs = {job("a", 3200, 50), job("b", 3200, 50)};
  const std::string dir = test_dir("nogain");
  ASSERT_EQ(run_jobs(jobs, true, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), 10.0, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "end_s"), 70.0, 1e-9);
  EXPECT_EQ(read_text(dir + "/allocations.csv").find(",a\n"), std::string::npos);
}

TEST(ClusterPacking, GavelPackedRunsTheLpsPairAndNeedsPacking) {
  // Both 320 samples/s alone (E = 320): ratios x_a + 0.75 p and x_b + 0.5 p on one device, at best 0.6 each with the
  // pair 0.8 of the time. At the first round nobody has received anything: the largest fraction, the pair, runs.
  const std::vector<traces::JobSpec> jobs = {job("a", 3200, 32), job("b", 3200, 40)};
  static const traces::PackedSpeedTable pairs = packed();
  ClusterSimOptions options;
  options.scheduler = "gavel-packed";
  options.scheduling.packing = true;
  options.packed_speeds = &pairs;
  const std::string dir = test_dir("gavel-packed");
  ASSERT_EQ(testing::run_jobs(jobs, testing::cluster(1, 1), options, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), 3200.0 / 240.0, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "end_s"), 3200.0 / 160.0, 1e-9);
  EXPECT_NE(read_text(dir + "/allocations.csv").find("0,a,fast,1,b\n0,b,fast,1,a\n"), std::string::npos);
  options.scheduling.packing = false;
  EXPECT_EQ(testing::run_jobs(jobs, testing::cluster(1, 1), options, test_dir("gavel-packed-off")),
            "scheduler 'gavel-packed' packs jobs two to a device: it needs packing (packing: true, --packing)");
}

TEST(ClusterPacking, TheSameInputsGiveTheSameBytes) {
  const std::vector<traces::JobSpec> jobs = {job("a", 3200, 32), job("b", 32000, 50), job("c", 6400, 40),
                                             job("d", 3200, 32)};
  const std::string x = test_dir("x");
  const std::string y = test_dir("y");
  ASSERT_EQ(run_jobs(jobs, true, x), "");
  ASSERT_EQ(run_jobs(jobs, true, y), "");
  for (const char* f : {"jobs.csv", "allocations.csv", "timeline.json"}) {
    EXPECT_FALSE(read_text(x + "/" + f).empty()) << f;
    EXPECT_EQ(read_text(x + "/" + f), read_text(y + "/" + f)) << f;
  }
}

}  // namespace
}  // namespace omnilearn::sim
