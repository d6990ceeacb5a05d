// Dynamic availability in the simulator: schedules in seconds and epochs, trace files, failures and rejoins.
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::phase;
using testing::mean_column;
using testing::read_csv;
using testing::run_in_child;
using testing::test_dir;


// Sum of the batches per decision in plans.csv, with worker `k`'s batch, in file order.
struct Decision {
  double time_s = 0.0;
  long sum = 0;
  std::map<std::string, long> batch;
};
std::vector<Decision> decisions(const std::string& dir) {
  std::vector<Decision> out;
  std::string key;
  for (const auto& r : read_csv(dir + "/plans.csv")) {
    const std::string k = r.at("step") + "/" + r.at("time_s") + "/" + r.at("reason");
    if (k != key) out.emplace_back(), key = k, out.back().time_s = std::stod(r.at("time_s"));
    out.back().sum += std::stol(r.at("batch"));
    out.back().batch[r.at("worker")] = std::stol(r.at("batch"));
  }
  return out;
}

TEST(Availability, AWorkerThatGoesDownLeavesThePlanAndRejoins) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(3, {1, 1, 1, 0}), phase(8, {1, 1, 1, 1})};
  const std::string dir = test_dir("down");
  ASSERT_EQ(run_in_child(s, dir), "");
  const auto avail = read_csv(dir + "/availability.csv");
  ASSERT_EQ(avail.size(), 2u);
  EXPECT_EQ(avail[0].at("worker"), "3");
  EXPECT_DOUBLE_EQ(std::stod(avail[0].at("time_s")), 3.0);
  EXPECT_DOUBLE_EQ(std::stod(avail[0].at("fraction")), 0.0);
  EXPECT_DOUBLE_EQ(std::stod(avail[1].at("time_s")), 8.0);
  bool saw_out = false, saw_back = false;
  for (const Decision& d : decisions(dir)) {
    EXPECT_EQ(d.sum, 128) << "at t=" << d.time_s;
    if (d.time_s >= 3.0 && d.time_s < 8.0 && d.batch.at("3") == 0) saw_out = true;
    if (d.time_s >= 8.0 && d.batch.at("3") > 0) saw_back = true;
  }
  EXPECT_TRUE(saw_out);
  EXPECT_TRUE(saw_back);
  // No iteration of worker 3 starts while it is down.
  for (const auto& r : read_csv(dir + "/iterations.csv")) {
    const double start = std::stod(r.at("start_s"));
    if (r.at("worker") == "3" && std::stol(r.at("batch")) > 0) {
      EXPECT_FALSE(start > 3.0 && start < 8.0) << start;
    }
  }
}

TEST(Availability, SlowdownInSecondsLengthensComputeAndTheControllerHearsIt) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "omnilearn");
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(5, {0.5, 1, 1, 1})};
  const std::string dir = test_dir("slow");
  ASSERT_EQ(run_in_child(s, dir), "");
  const auto rows = read_csv(dir + "/iterations.csv");
  double before = 0, after = 0;
  for (const auto& r : rows) {
    if (r.at("worker") != "0") continue;
    const double start = std::stod(r.at("start_s"));
    const double per_sample = std::stod(r.at("compute_s")) / std::stod(r.at("batch"));
    if (start + std::stod(r.at("compute_s")) < 5.0) before = per_sample;
    if (start > 5.0) after = per_sample;
  }
  EXPECT_GT(after, 1.9 * before);
  // The controller moved work away from the slowed worker.
  const auto d = decisions(dir);
  ASSERT_FALSE(d.empty());
  EXPECT_LT(d.back().batch.at("0"), 32);
}

TEST(Availability, EpochScheduleAppliesAtEpochBoundaries) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  s.workload.dataset_samples = 128 * 10;
  s.workload.epochs = 3;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kEpochs;
  s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(1, {0.25, 1, 1, 1}), phase(2, {1, 1, 1, 1})};
  const std::string dir = test_dir("epochs");
  ASSERT_EQ(run_in_child(s, dir), "");
  const auto avail = read_csv(dir + "/availability.csv");
  ASSERT_EQ(avail.size(), 2u);
  const auto rows = read_csv(dir + "/iterations.csv");
  const double e0 = mean_column(rows, "compute_s", "epoch", "0");
  double e1 = 0;
  int n = 0;
  for (const auto& r : rows) {
    if (r.at("epoch") == "1" && r.at("worker") == "0") e1 += std::stod(r.at("compute_s")), ++n;
  }
  EXPECT_NEAR(e1 / n, 4.0 * e0, 1e-9);
}

TEST(Availability, TraceFileIsMappedAndScaled) {
  const std::string dir = test_dir("trace");
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/../t.csv";
  std::ofstream(trace) << "time_s,worker,fraction\n0,a,1\n2,a,0.5\n0,b,1\n4,b,0\n6,b,1\n";
  auto s = four_worker_scenario({12, 12, 12, 12}, "omnilearn");
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kTrace;
  s.availability.trace.path = trace;
  s.availability.trace.nodes = {"a", "a", "a", "b"};
  s.availability.trace.time_scale = 0.5;
  ASSERT_EQ(run_in_child(s, dir + "/run"), "");
  const auto avail = read_csv(dir + "/run/availability.csv");
  // Workers 0-2 at t=1 (0.5), worker 3 down at t=2 and back at t=3.
  ASSERT_EQ(avail.size(), 5u);
  EXPECT_DOUBLE_EQ(std::stod(avail[0].at("time_s")), 1.0);
  EXPECT_EQ(avail[3].at("worker"), "3");
  EXPECT_DOUBLE_EQ(std::stod(avail[3].at("time_s")), 2.0);
  EXPECT_DOUBLE_EQ(std::stod(avail[4].at("time_s")), 3.0);
  for (const Decision& d : decisions(dir + "/run")) EXPECT_EQ(d.sum, 128);
}

TEST(Availability, AspWorkerDownIdlesAndReturns) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "omnilearn");
  s.mode = controller::TrainingMode::kAsp;
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(2, {0, 1, 1, 1}), phase(6, {1, 1, 1, 1})};
  const std::string dir = test_dir("asp");
  ASSERT_EQ(run_in_child(s, dir), "");
  bool after = false;
  for (const auto& r : read_csv(dir + "/iterations.csv")) {
    if (r.at("worker") != "0") continue;
    const double start = std::stod(r.at("start_s"));
    EXPECT_FALSE(start > 2.0 && start < 6.0) << start;
    after = after || start >= 6.0;
  }
  EXPECT_TRUE(after);
}

TEST(Availability, MarkovGeneratorRunsDeterministically) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "omnilearn");
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kGenerator;
  s.availability.generator.kind = scenarios::GeneratorKind::kMarkov;
  s.availability.generator.mtbf_s = 5;
  s.availability.generator.mttr_s = 1;
  s.availability.generator.duration_s = 30;
  const std::string a = test_dir("a");
  const std::string b = test_dir("b");
  ASSERT_EQ(run_in_child(s, a), "");
  ASSERT_EQ(run_in_child(s, b), "");
  EXPECT_FALSE(read_csv(a + "/availability.csv").empty());
  EXPECT_EQ(testing::read_text(a + "/plans.csv"), testing::read_text(b + "/plans.csv"));
  for (const Decision& d : decisions(a)) EXPECT_EQ(d.sum, 128) << d.time_s;
}

}  // namespace
}  // namespace omnilearn::sim
