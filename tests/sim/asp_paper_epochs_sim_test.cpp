// workload.asp.epochs: ceil (the OmniLearn paper's server counts epochs as ceil(samples / epoch)): with pull:
// per-epoch the first barrier, and the epoch's decision, come once every worker has pushed once (the paper's
// compute_bsz waits for all); floor keeps the first at the end of the first epoch. barriers.csv names, per barrier,
// the worker whose push the parameters everyone pulls came from; summary.json the update shares and staleness.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::read_csv;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

// The paper's algorithm on four unequal workers (2/4/6/16 cores), 20 steps' worth of samples per epoch, 3 epochs.
scenarios::Scenario paper_scenario(scenarios::AspEpochs epochs) {
  auto s = four_worker_scenario({2, 4, 6, 16}, "omnilearn-asp");
  s.mode = controller::TrainingMode::kAsp;
  s.workload.dataset_samples = 128 * 20;
  s.workload.epochs = 3;
  s.workload.asp.update = scenarios::AspUpdate::kModelOverwrite;
  s.workload.asp.pull = scenarios::AspPull::kPerEpoch;
  s.workload.asp.epochs = epochs;
  s.policy.trigger = controller::DecisionTrigger::kEveryEpoch;
  s.policy.dead_band = 0.2;
  return s;
}

// The first decision after the initial ones (step 0), as (step, time_s).
std::pair<std::int64_t, double> first_decision(const std::string& dir) {
  for (const auto& r : read_csv(dir + "/plans.csv")) {
    if (std::stoll(r.at("step")) > 0) return {std::stoll(r.at("step")), std::stod(r.at("time_s"))};
  }
  return {-1, -1.0};
}

TEST(AspPaperEpochsSim, CeilDecidesOnceEveryWorkerHasPushedOnce) {
  for (const int flow_max : {64, 0}) {
    SimOptions options;
    options.asp_flow_max_workers = flow_max;
    const std::string ceil_dir = test_dir("ceil-" + std::to_string(flow_max));
    const std::string floor_dir = test_dir("floor-" + std::to_string(flow_max));
    ASSERT_EQ(run_in_child(paper_scenario(scenarios::AspEpochs::kCeil), ceil_dir, options), "");
    ASSERT_EQ(run_in_child(paper_scenario(scenarios::AspEpochs::kFloor), floor_dir, options), "");
    // ceil: the first push opens epoch 1 and the barrier; it opens when the 4th worker's first push is applied.
    const auto [step, time_s] = first_decision(ceil_dir);
    EXPECT_EQ(step, 4) << "one push from each of the four workers";
    const auto barriers = read_csv(ceil_dir + "/barriers.csv");
    ASSERT_FALSE(barriers.empty());
    EXPECT_EQ(std::stoll(barriers[0].at("update")), 4);
    EXPECT_EQ(std::stoll(barriers[0].at("epoch")), 0);
    EXPECT_EQ(std::stoll(barriers[0].at("writer_steps")), 1);
    EXPECT_DOUBLE_EQ(std::stod(barriers[0].at("time_s")), time_s);
    // Nobody starts a second iteration before the barrier; every worker's first push is among the first four.
    std::map<std::string, int> seen;
    for (const auto& r : read_csv(ceil_dir + "/iterations.csv")) {
      if (seen[r.at("worker")]++ == 0) {
        EXPECT_LE(std::stoll(r.at("step")), 4);
      } else {
        EXPECT_GE(std::stod(r.at("start_s")), time_s);
      }
    }
    // A barrier per epoch start: the first push of epochs 0, 1 and 2 (the run ends at the end of epoch 2).
    EXPECT_EQ(barriers.size(), 3u);
    // floor, as before: the first decision at the end of the first epoch (20 steps' samples, far more than 4 pushes).
    EXPECT_GT(first_decision(floor_dir).first, 10);
    EXPECT_GT(first_decision(floor_dir).second, time_s);
  }
}

// At each barrier the writer is the worker whose push was the last applied before it opened (the row whose step
// is the barrier's update), with its batch and its count of pushes so far; the shares and staleness add up.
TEST(AspPaperEpochsSim, BarrierLogNamesTheLastWriter) {
  const std::string dir = test_dir("barrier-log");
  ASSERT_EQ(run_in_child(paper_scenario(scenarios::AspEpochs::kFloor), dir), "");
  const auto rows = read_csv(dir + "/iterations.csv");
  const auto barriers = read_csv(dir + "/barriers.csv");
  ASSERT_EQ(barriers.size(), 2u) << "the ends of epochs 0 and 1 (epoch 2's end ends the run)";
  for (const auto& b : barriers) {
    const std::int64_t update = std::stoll(b.at("update"));
    const auto last = std::find_if(rows.begin(), rows.end(),
                                   [&](const auto& r) { return std::stoll(r.at("step")) == update; });
    ASSERT_NE(last, rows.end()) << "update " << update;
    EXPECT_EQ(last->at("worker"), b.at("writer"));
    EXPECT_EQ(last->at("batch"), b.at("writer_batch"));
    const auto steps = std::count_if(rows.begin(), rows.end(), [&](const auto& r) {
      return r.at("worker") == b.at("writer") && std::stoll(r.at("step")) <= update;
    });
    EXPECT_EQ(std::stoll(b.at("writer_steps")), steps);
    EXPECT_LE(std::stoll(b.at("writer_steps_since_pull")), steps);
    EXPECT_GE(std::stoll(b.at("writer_steps_since_pull")), 1);
  }
  double share = 0.0;
  for (int k = 0; k < 4; ++k) share += summary_number(dir, "asp_update_share_w" + std::to_string(k));
  EXPECT_NEAR(share, 1.0, 1e-12);
  std::vector<std::int64_t> staleness;
  for (const auto& r : rows) staleness.push_back(std::stoll(r.at("staleness")));
  std::sort(staleness.begin(), staleness.end());
  const auto at = [&](double q) {
    return static_cast<double>(staleness[static_cast<std::size_t>(std::ceil(q * staleness.size())) - 1]);
  };
  EXPECT_EQ(summary_number(dir, "asp_staleness_median"), at(0.5));
  EXPECT_EQ(summary_number(dir, "asp_staleness_p90"), at(0.9));
}

}  // namespace
}  // namespace omnilearn::sim
