// The simulator's hooks for a scheduler that adapts batches (pollux_job_hooks.h): a job's goodput by GPU count from
// Pollux's tables, and the switch of its batch mid-run.
#include <gtest/gtest.h>

#include <string>

#include "omnilearn/sim/cluster_options.h"
#include "pollux_job_hooks.h"

namespace omnilearn::sim {
namespace {

const traces::PolluxJobModel& model() {
  static const traces::PolluxJobModel m =
      std::move(traces::PolluxJobModel::read(std::string(OMNILEARN_DEVICES_DIR) + "/pollux-steps.csv",
                                             std::string(OMNILEARN_DEVICES_DIR) + "/pollux-efficiency.csv"))
          .value();
  return m;
}

ClusterSimOptions pollux_options() {
  ClusterSimOptions o;
  o.pollux = &model();
  o.measured_steps = true;
  o.statistical_efficiency = true;
  return o;
}

traces::JobSpec job(const std::string& model_name, std::int64_t batch) {
  traces::JobSpec j;
  j.name = "j";
  j.model = model_name;
  j.epochs = model_name == "ncf" ? 10.0 : 100.0;
  j.global_batch = batch;
  j.workers = j.min_workers = j.max_workers = 2;
  return j;
}

scheduler::ClusterFacts pollux_cluster() {
  scheduler::ClusterFacts c;
  for (int h = 0; h < 16; ++h) c.hosts.push_back({"n" + std::to_string(h), "t4", 4});
  return c;
}

TEST(PolluxGoodput, AJobBecomesElasticWithItsBestBatchPerGpuCount) {
  const ClusterSimOptions o = pollux_options();
  AdaptiveBatch state;
  scheduler::JobFacts f;
  ASSERT_TRUE(fill_goodput_facts(o, job("resnet18", 128), pollux_cluster(), 0.0, state, f).is_ok());
  EXPECT_EQ(f.min_workers, 1);
  EXPECT_EQ(f.max_workers, 64);  // cifar10: 4096 / 32 = 128 GPUs, capped at the cluster's 64
  ASSERT_EQ(f.goodput_by_workers.size(), 64u);
  ASSERT_EQ(f.batch_by_workers.size(), 64u);
  // One GPU: the best of the candidates is at least the smallest batch's throughput (efficiency 1 there).
  auto one = model().job_step("cifar10", {1}, 128);
  ASSERT_TRUE(one.is_ok());
  EXPECT_GE(f.goodput_by_workers[0], static_cast<double>(one->batch) / one->seconds * (1.0 - 1e-9));
  // Four GPUs on one node do better than one; each count's batch leaves every GPU the smallest local batch.
  EXPECT_GT(f.goodput_by_workers[3], f.goodput_by_workers[0]);
  for (std::size_t n = 1; n <= 64; ++n) EXPECT_GE(f.batch_by_workers[n - 1], static_cast<std::int64_t>(32 * n));
  // ncf: one GPU at Pollux's batch.
  AdaptiveBatch ncf_state;
  scheduler::JobFacts g;
  ASSERT_TRUE(fill_goodput_facts(o, job("ncf", 256), pollux_cluster(), 0.0, ncf_state, g).is_ok());
  EXPECT_EQ(g.max_workers, 1);
  EXPECT_EQ(g.batch_by_workers, (std::vector<std::int64_t>{32768}));
}

TEST(PolluxGoodput, WithoutStatisticalEfficiencyTheFactsStayAsTheyAre) {
  ClusterSimOptions o = pollux_options();
  o.statistical_efficiency = false;
  AdaptiveBatch state;
  scheduler::JobFacts f;
  f.min_workers = f.max_workers = 2;
  ASSERT_TRUE(fill_goodput_facts(o, job("resnet18", 128), pollux_cluster(), 0.0, state, f).is_ok());
  EXPECT_EQ(f.max_workers, 2);
  EXPECT_TRUE(f.goodput_by_workers.empty());
}

TEST(PolluxGoodput, ASwitchedBatchTrainsTheProgressLeftAtItsEfficiency) {
  const ClusterSimOptions o = pollux_options();
  const traces::JobSpec j = job("resnet18", 128);
  AdaptiveBatch state;
  double total = *model().samples_needed("cifar10", 128.0, 100.0);
  // Before any sample, a switch to 1024 makes the job the one of 1024 from the start.
  ASSERT_TRUE(switch_batch(o, j, 1024, 0.0, state, total).is_ok());
  EXPECT_DOUBLE_EQ(total, *model().samples_needed("cifar10", 1024.0, 100.0));
  EXPECT_EQ(current_batch(j, state), 1024);
  // After 10.5 epochs' samples at 1024, back to 128: the rest at 128.
  const double done = *model().samples_needed("cifar10", 1024.0, 10.5);
  ASSERT_TRUE(switch_batch(o, j, 128, done, state, total).is_ok());
  EXPECT_NEAR(total, done + *model().samples_between("cifar10", 128.0, 10.5, 100.0), 1e-6 * total);
  EXPECT_NEAR(state.epochs_at, 10.5, 1e-9);
  // The same batch again changes nothing.
  const double before = total;
  ASSERT_TRUE(switch_batch(o, j, 128, done + 1000.0, state, total).is_ok());
  EXPECT_EQ(total, before);
}

}  // namespace
}  // namespace omnilearn::sim
