// End-to-end runs of the simulator: outputs, determinism, and that platform parameters take effect.
#include "omnilearn/sim/simulation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::mean_column;
using testing::read_csv;
using testing::read_text;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

// The sample standard deviation of `worker`'s compute_s.
double compute_std(const std::vector<testing::CsvRow>& rows, const std::string& worker) {
  const double mean = mean_column(rows, "compute_s", "worker", worker);
  double var = 0.0;
  int n = 0;
  for (const auto& r : rows) {
    if (r.at("worker") != worker) continue;
    var += (std::stod(r.at("compute_s")) - mean) * (std::stod(r.at("compute_s")) - mean);
    ++n;
  }
  return n > 1 ? std::sqrt(var / (n - 1)) : 0.0;
}

std::string without_wall_clock(const std::string& manifest) {
  const auto at = manifest.find("\"wall_clock\"");
  return at == std::string::npos ? manifest : manifest.substr(0, at);
}

TEST(Simulation, WritesEveryFileOfTheRunFolder) {
  const auto s = four_worker_scenario({12, 12, 8, 16}, "omnilearn");
  const std::string dir = test_dir("run");
  ASSERT_EQ(run_in_child(s, dir), "");
  for (const char* f : {"manifest.json", "iterations.csv", "plans.csv", "availability.csv", "summary.json",
                        "timeline.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  }
  const auto rows = read_csv(dir + "/iterations.csv");
  EXPECT_EQ(rows.size(), 4u * 50u);  // 4 workers x 50 steps
  EXPECT_EQ(summary_number(dir, "iterations"), 50);
  EXPECT_EQ(summary_number(dir, "epochs"), 1);
  EXPECT_GT(summary_number(dir, "total_time_s"), 0.0);
  const std::string manifest = read_text(dir + "/manifest.json");
  EXPECT_NE(manifest.find("\"simgrid\""), std::string::npos);
  EXPECT_NE(manifest.find("\"elapsed_s\""), std::string::npos);
  EXPECT_EQ(manifest.find("\"elapsed_s\": null"), std::string::npos);  // filled in at the end
  // Every plan row of a decision sums to B.
  std::map<std::string, long> sum_by_decision;
  for (const auto& r : read_csv(dir + "/plans.csv")) {
    sum_by_decision[r.at("step") + "/" + r.at("time_s") + "/" + r.at("reason")] += std::stol(r.at("batch"));
  }
  ASSERT_FALSE(sum_by_decision.empty());
  for (const auto& [key, sum] : sum_by_decision) EXPECT_EQ(sum, 128) << key;
}

TEST(Simulation, SameScenarioAndSeedGiveByteIdenticalRunFolders) {
  const auto s = four_worker_scenario({6, 6, 4, 32}, "omnilearn");
  const std::string a = test_dir("a");
  const std::string b = test_dir("b");
  ASSERT_EQ(run_in_child(s, a), "");
  ASSERT_EQ(run_in_child(s, b), "");
  for (const char* f : {"iterations.csv", "plans.csv", "availability.csv", "summary.json", "timeline.json"}) {
    EXPECT_EQ(read_text(a + "/" + f), read_text(b + "/" + f)) << f;
  }
  EXPECT_EQ(without_wall_clock(read_text(a + "/manifest.json")), without_wall_clock(read_text(b + "/manifest.json")));
}

TEST(Simulation, HalvingLinkBandwidthLengthensCommunication) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  const std::string fast = test_dir("fast");
  const std::string slow = test_dir("slow");
  ASSERT_EQ(run_in_child(s, fast), "");
  for (auto& w : s.cluster.workers) w.bandwidth_Bps /= 2;
  ASSERT_EQ(run_in_child(s, slow), "");
  const double comm_fast = mean_column(read_csv(fast + "/iterations.csv"), "comm_s");
  const double comm_slow = mean_column(read_csv(slow + "/iterations.csv"), "comm_s");
  EXPECT_GT(comm_fast, 0.0);
  EXPECT_GT(comm_slow, 1.8 * comm_fast);
  EXPECT_GT(summary_number(slow, "total_time_s"), summary_number(fast, "total_time_s"));
}

// compute_jitter_cv (a testbed's measured compute variation): mean kept, the CV as given, the same run twice.
TEST(Simulation, ComputeJitterKeepsTheMeanAndHasTheMeasuredVariation) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  s.workload.dataset_samples = 128 * 400;  // 400 steps
  const std::string base = test_dir("base");
  ASSERT_EQ(run_in_child(s, base), "");
  s.workload.model.compute_jitter_cv = 0.3;
  const std::string jitter = test_dir("jitter");
  ASSERT_EQ(run_in_child(s, jitter), "");
  const auto rows = read_csv(jitter + "/iterations.csv");
  const double mean = mean_column(rows, "compute_s", "worker", "1");
  const double cv = compute_std(rows, "1") / mean;
  EXPECT_NEAR(mean, mean_column(read_csv(base + "/iterations.csv"), "compute_s", "worker", "1"), 0.05 * mean);
  EXPECT_NEAR(cv, 0.3, 0.05);
  // The slowest of four jittered workers sets each step: longer steps than without jitter.
  EXPECT_GT(summary_number(jitter, "total_time_s"), 1.1 * summary_number(base, "total_time_s"));
  const std::string again = test_dir("again");
  ASSERT_EQ(run_in_child(s, again), "");
  EXPECT_EQ(read_csv(again + "/iterations.csv").size(), rows.size());
  EXPECT_EQ(mean_column(read_csv(again + "/iterations.csv"), "compute_s"), mean_column(rows, "compute_s"));
  // All of it shared (the host's noise): every worker slows together, so nobody waits for an outlier.
  s.workload.model.compute_jitter_shared = 1.0;
  const std::string shared = test_dir("shared");
  ASSERT_EQ(run_in_child(s, shared), "");
  EXPECT_NEAR(summary_number(shared, "total_time_s"), summary_number(base, "total_time_s"),
              0.05 * summary_number(base, "total_time_s"));
  EXPECT_NEAR(mean_column(read_csv(shared + "/iterations.csv"), "wait_s"), 0.0, 1e-9);
}

// compute_noise (a testbed's measured noise per CPU share): the standard deviation of a worker's compute in seconds is
// the table's at its share, whatever its batch; the mean is kept.
TEST(Simulation, ComputeNoiseHasTheMeasuredSecondsAtEveryBatch) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  s.workload.model.measured_fixed_s = 0.002;
  s.workload.model.measured_per_sample_s = 0.0002;
  s.workload.model.host_core_flops = 4.8e11;  // each node is a quarter of a host core
  for (BatchSize global : {128, 64}) {
    s.workload.global_batch = global;
    s.workload.dataset_samples = global * 400;
    s.workload.model.noise_shares.clear();
    s.workload.model.noise_std_s.clear();
    const std::string base = test_dir("base" + std::to_string(global));
    ASSERT_EQ(run_in_child(s, base), "");
    s.workload.model.noise_shares = {0.125, 0.5};
    s.workload.model.noise_std_s = {0.002, 0.006};  // 0.004 s at share 0.25
    const std::string noisy = test_dir("noisy" + std::to_string(global));
    ASSERT_EQ(run_in_child(s, noisy), "");
    const auto rows = read_csv(noisy + "/iterations.csv");
    const double mean = mean_column(rows, "compute_s", "worker", "2");
    EXPECT_NEAR(compute_std(rows, "2"), 0.004, 0.0006) << "batch " << global / 4;
    EXPECT_NEAR(mean, mean_column(read_csv(base + "/iterations.csv"), "compute_s", "worker", "2"), 0.05 * mean);
  }
}

TEST(Simulation, HalvingAHostsSpeedLengthensItsCompute) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  const std::string base = test_dir("base");
  const std::string slow = test_dir("slow");
  ASSERT_EQ(run_in_child(s, base), "");
  s.cluster.workers[1].speed_flops /= 2;
  ASSERT_EQ(run_in_child(s, slow), "");
  const auto b = read_csv(base + "/iterations.csv");
  const auto h = read_csv(slow + "/iterations.csv");
  EXPECT_NEAR(mean_column(h, "compute_s", "worker", "1"), 2.0 * mean_column(b, "compute_s", "worker", "1"), 1e-9);
  EXPECT_NEAR(mean_column(h, "compute_s", "worker", "0"), mean_column(b, "compute_s", "worker", "0"), 1e-12);
  EXPECT_GT(mean_column(h, "wait_s", "worker", "0"), mean_column(b, "wait_s", "worker", "0"));  // others wait
}

TEST(Simulation, CpuQuotaTestbedTermsSlowComputeAndTheAllReduce) {
  // Two workers at CPU shares 0.5 and 1.0 of a host core; the measured law, its slowdown table, a fixed
  // all-reduce cost and the quota period's wait per ring step.
  auto s = four_worker_scenario({1, 2}, "uniform");
  scenarios::ModelProfile& m = s.workload.model;
  m.measured_fixed_s = 0.001;
  m.measured_per_sample_s = 0.0002;
  m.host_core_flops = 20e9;
  m.slowdown_shares = {0.5, 1.0};
  m.slowdown_factors = {2.4, 1.0};
  const std::string base = test_dir("base");
  ASSERT_EQ(run_in_child(s, base), "");
  m.allreduce_fixed_s = 0.002;
  m.quota_period_s = 0.01;
  const std::string quota = test_dir("quota");
  ASSERT_EQ(run_in_child(s, quota), "");
  const auto b = read_csv(base + "/iterations.csv");
  const auto q = read_csv(quota + "/iterations.csv");
  const double full = 0.001 + 64 * 0.0002;  // uniform: 64 per worker
  EXPECT_NEAR(mean_column(b, "compute_s", "worker", "0"), 2.4 * full, 1e-9);
  EXPECT_NEAR(mean_column(b, "compute_s", "worker", "1"), full, 1e-9);
  // 2(P-1) = 2 ring steps, each waiting E[Uniform(0, (1 - 0.5) * 10 ms)] for worker 0, plus the fixed 2 ms.
  const double added = 0.002 + 2 * 0.25 * 0.01;
  EXPECT_NEAR(mean_column(q, "comm_s", "worker", "0") - mean_column(b, "comm_s", "worker", "0"), added, 1e-9);
  EXPECT_NEAR(mean_column(q, "comm_s", "worker", "1") - mean_column(b, "comm_s", "worker", "1"), added, 1e-9);
}

TEST(Simulation, EachRingStepWaitsForTheMostThrottledParticipant) {
  // Shares 0.5, 0.5, 0.25: each of the 4 ring steps waits for the most throttled one (0.25): (1 - 0.25) / 2 x 10 ms.
  auto s = four_worker_scenario({2, 2, 1}, "uniform");
  scenarios::ModelProfile& m = s.workload.model;
  m.measured_fixed_s = 0.001;
  m.measured_per_sample_s = 0.0002;
  m.host_core_flops = 40e9;
  const std::string base = test_dir("base");
  ASSERT_EQ(run_in_child(s, base), "");
  m.quota_period_s = 0.01;
  const std::string quota = test_dir("quota");
  ASSERT_EQ(run_in_child(s, quota), "");
  const double added = mean_column(read_csv(quota + "/iterations.csv"), "comm_s", "worker", "2") -
                       mean_column(read_csv(base + "/iterations.csv"), "comm_s", "worker", "2");
  EXPECT_NEAR(added, 4 * 0.375 * 0.01, 1e-9);
  // Communication threads outside the quota (testbed `emulator.throttle: compute`): one wait per all-reduce.
  m.quota_holds_comm = false;
  const std::string free_comm = test_dir("free-comm");
  ASSERT_EQ(run_in_child(s, free_comm), "");
  EXPECT_NEAR(mean_column(read_csv(free_comm + "/iterations.csv"), "comm_s", "worker", "2") -
                  mean_column(read_csv(base + "/iterations.csv"), "comm_s", "worker", "2"),
              1 * 0.375 * 0.01, 1e-9);
}

TEST(Simulation, AnalyticAllReduceMatchesSimulatedFlows) {
  // Heterogeneous links and a backbone that binds: max-min sharing with progressive filling in both paths.
  auto s = four_worker_scenario({12, 12, 8, 16}, "uniform");
  s.cluster.workers[0].bandwidth_Bps = 0.3e9;
  s.cluster.workers[2].bandwidth_Bps = 0.6e9;
  s.cluster.backbone_bandwidth_Bps = 2.0e9;
  const std::string flows = test_dir("flows");
  const std::string analytic = test_dir("analytic");
  ASSERT_EQ(run_in_child(s, flows), "");
  SimOptions options;
  options.flow_allreduce_max_workers = 0;
  ASSERT_EQ(run_in_child(s, analytic, options), "");
  const auto f = read_csv(flows + "/iterations.csv");
  const auto a = read_csv(analytic + "/iterations.csv");
  for (const char* k : {"0", "1", "2", "3"}) {
    const double cf = mean_column(f, "comm_s", "worker", k);
    EXPECT_NEAR(mean_column(a, "comm_s", "worker", k), cf, 0.01 * cf) << "worker " << k;
  }
  EXPECT_NEAR(summary_number(analytic, "total_time_s"), summary_number(flows, "total_time_s"),
              0.01 * summary_number(flows, "total_time_s"));
}

TEST(Simulation, AspRecordsStalenessPerIteration) {
  auto s = four_worker_scenario({6, 6, 4, 32}, "omnilearn");
  s.mode = controller::TrainingMode::kAsp;
  const std::string dir = test_dir("asp");
  ASSERT_EQ(run_in_child(s, dir), "");
  const auto rows = read_csv(dir + "/iterations.csv");
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) ASSERT_FALSE(r.at("staleness").empty());
  EXPECT_GT(summary_number(dir, "mean_staleness"), 0.0);
  EXPECT_GE(summary_number(dir, "max_staleness"), 1.0);
  EXPECT_GE(summary_number(dir, "iterations"), 50.0);
  EXPECT_NE(read_text(dir + "/summary.json").find("\"asp\""), std::string::npos);
}

TEST(Simulation, RowsAndTimelineCanBeTurnedOffWithoutChangingTheSummary) {
  const auto s = four_worker_scenario({12, 12, 8, 16}, "omnilearn");
  const std::string full = test_dir("full");
  const std::string lean = test_dir("lean");
  ASSERT_EQ(run_in_child(s, full), "");
  SimOptions options;
  options.iteration_rows = false;
  options.timeline = false;
  ASSERT_EQ(run_in_child(s, lean, options), "");
  EXPECT_TRUE(read_csv(lean + "/iterations.csv").empty());
  EXPECT_FALSE(std::filesystem::exists(lean + "/timeline.json"));
  EXPECT_EQ(read_text(full + "/summary.json"), read_text(lean + "/summary.json"));
}

TEST(Simulation, ProgressIsReportedUpToOne) {
  // In a child, as every run here: a test process that ran an engine itself leaves SimGrid's state to the children
  // forked after it (a platform file's same-host route then fails). The child writes what it sees to a file.
  const auto s = four_worker_scenario({12, 12, 8, 16}, "uniform");
  const std::string dir = test_dir("progress");
  const std::string seen_path = dir + ".progress";
  SimOptions options;
  options.progress = [seen_path](double f) {
    std::ofstream out(seen_path, std::ios::app);
    out.precision(17);
    out << f << '\n';
  };
  ASSERT_EQ(run_in_child(s, dir, options), "");
  std::vector<double> seen;
  std::ifstream in(seen_path);
  for (double f; in >> f;) seen.push_back(f);
  std::filesystem::remove(seen_path);
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(summary_number(dir, "iterations"), 50.0);
  EXPECT_NE(read_text(dir + "/summary.json").find("\"policy\": \"uniform\""), std::string::npos);
}

// stop_requested ends the run at the next step, BSP and ASP: rows whole, timeline.json valid, no summary.json.
TEST(Simulation, StopRequestedEndsTheRunWithValidFilesAndNoSummary) {
  for (const auto mode : {controller::TrainingMode::kBsp, controller::TrainingMode::kAsp}) {
    auto s = four_worker_scenario({12, 12, 8, 16}, "uniform");
    s.mode = mode;
    const std::string dir = test_dir(mode == controller::TrainingMode::kBsp ? "bsp" : "asp");
    SimOptions options;
    auto polls = std::make_shared<int>(0);
    options.stop_requested = [polls] { return ++*polls > 10; };
    const std::string error = run_in_child(s, dir, options);
    EXPECT_NE(error.find("stopped on request"), std::string::npos) << error;
    EXPECT_FALSE(std::filesystem::exists(dir + "/summary.json"));
    const auto timeline = nlohmann::json::parse(read_text(dir + "/timeline.json"));
    EXPECT_GT(timeline["traceEvents"].size(), 0u);
    const auto rows = read_csv(dir + "/iterations.csv");
    EXPECT_GT(rows.size(), 0u);
    EXPECT_LT(rows.size(), 4u * 50u);  // stopped before the end
    EXPECT_FALSE(std::filesystem::exists(dir + "/.omnilearn.lock"));
  }
}

// A folder another run holds is refused; a finished run's folder needs FolderReuse::kReplace.
TEST(Simulation, AFolderThatIsNotEmptyNeedsReplace) {
  const auto s = four_worker_scenario({12, 12, 8, 16}, "uniform");
  const std::string dir = test_dir("reuse");
  ASSERT_EQ(run_in_child(s, dir), "");
  EXPECT_NE(run_in_child(s, dir).find("not empty"), std::string::npos);
  SimOptions options;
  options.reuse = run::FolderReuse::kReplace;
  EXPECT_EQ(run_in_child(s, dir, options), "");
}

// A torus without its dimensions (a scenario built in code skips the parser's checks) is an error naming the field.
TEST(Simulation, AnIncompleteTopologyIsAnErrorNamingIt) {
  auto s = four_worker_scenario({12, 12, 12, 12}, "uniform");
  s.cluster.topology = scenarios::Topology::kTorus;
  const std::string error = run_in_child(s, test_dir("torus"));
  EXPECT_NE(error.find("cluster.topology"), std::string::npos) << error;
}

}  // namespace
}  // namespace omnilearn::sim
