// The multi-job simulator (sim/cluster_simulation.h): hand-computed FIFO times, contention on a shared link,
// preemption under LAS, determinism and errors. Each run forks (one SimGrid engine per process).
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
using testing::summary_number;
using testing::test_dir;

using testing::cell;
using testing::cluster;
using testing::job;
using testing::run_jobs;
using testing::table;

TEST(ClusterSim, FifoOnOneDeviceGivesTheHandComputedTimes) {
  // One device; each job is 100 steps of 32 samples at 320 samples/s: 10 s. Rounds of 60 s: a job that arrives
  // while another runs starts at the first round after that one ended.
  const std::vector<traces::JobSpec> jobs = {job("a", 0, 1, 3200, 32), job("b", 5, 1, 3200, 32),
                                             job("c", 65, 1, 3200, 32)};
  const std::string dir = test_dir("fifo");
  ASSERT_EQ(run_jobs(jobs, cluster(1, 1), {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  ASSERT_EQ(rows.size(), 3u);
  const double expected[3][2] = {{0, 10}, {60, 70}, {120, 130}};
  const char* names[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(cell(rows, names[i], "start_s"), expected[i][0], 1e-9) << names[i];
    EXPECT_NEAR(cell(rows, names[i], "end_s"), expected[i][1], 1e-9) << names[i];
    EXPECT_EQ(cell(rows, names[i], "steps"), 100) << names[i];
    EXPECT_NEAR(cell(rows, names[i], "device_s_fast"), 10.0, 1e-9) << names[i];
  }
  EXPECT_NEAR(cell(rows, "b", "queueing_s"), 55.0, 1e-9);
  EXPECT_NEAR(cell(rows, "c", "jct_s"), 65.0, 1e-9);
  EXPECT_NEAR(summary_number(dir, "makespan_s"), 130.0, 1e-9);
  EXPECT_NEAR(summary_number(dir, "mean_jct_s"), (10.0 + 65.0 + 65.0) / 3.0, 1e-9);
  EXPECT_NEAR(summary_number(dir, "median_jct_s"), 65.0, 1e-9);
  // The timeline: b waited 55 s, then ran 10 s on the one device (trace events in microseconds).
  const std::string timeline = read_text(dir + "/timeline.json");
  EXPECT_NE(timeline.find(R"({"dur":55000000.0,"name":"waiting","ph":"X","pid":1,"tid":1,"ts":5000000.0})"),
            std::string::npos)
      << timeline;
  EXPECT_NE(timeline.find(R"("name":"running on 1 fast","ph":"X","pid":1,"tid":1,"ts":60000000.0})"),
            std::string::npos)
      << timeline;
}

TEST(ClusterSim, TwoJobsBehindTheSameLinksEachRunSlowerByTheLinksShare) {
  // Two nodes of two devices; each job has one worker on each node (spread), so both jobs' all-reduce flows cross
  // both nodes' links at once. Compute: 16 samples at 320/s = 0.05 s per step, the same alone and shared.
  ClusterSimOptions o;
  o.scheduling.placement = scheduler::Placement::kSpread;
  const auto a = job("a", 0, 2, 3200, 32);
  const auto b = job("b", 0, 2, 3200, 32);
  const std::string alone = test_dir("alone");
  const std::string shared = test_dir("shared");
  ASSERT_EQ(run_jobs({a}, cluster(2, 2), o, alone), "");
  ASSERT_EQ(run_jobs({a, b}, cluster(2, 2), o, shared), "");
  const auto one = read_csv(alone + "/jobs.csv");
  const auto two = read_csv(shared + "/jobs.csv");
  const double compute_s = 16.0 / 320.0;
  const double comm_alone = cell(one, "a", "jct_s") / 100.0 - compute_s;
  ASSERT_GT(comm_alone, 0.0);
  // 1 x the gradient (2(n-1)/n with n = 2) of 11.7 M float32 parameters over a 1 GB/s link.
  EXPECT_NEAR(comm_alone, 4.0 * 11.7e6 / 1e9, 1e-9);
  for (const char* name : {"a", "b"}) {
    const double comm_shared = cell(two, name, "jct_s") / 100.0 - compute_s;
    // Two flows share each link direction: each gets half of what one flow alone gets (CM02's max-min share).
    EXPECT_NEAR(comm_shared, 2.0 * comm_alone, 1e-6 * comm_alone) << name;
  }
}

TEST(ClusterSim, AJobSharingANodeWithOneWorkerJobsStepsAsAlone) {
  // Two nodes of three devices, packed: the 4-worker job takes 3 on node 0 and 1 on node 1, where two one-worker
  // jobs (no flows) sit beside it. Only flows meet, on the nodes' links: its steps take what they take alone, and it
  // ends when it ends alone (its steady steps run as one execution, neighbours or not).
  const auto big = job("big", 0, 4, 320000, 128);
  const std::string alone = test_dir("big-alone");
  const std::string beside = test_dir("big-beside");
  ASSERT_EQ(run_jobs({big}, cluster(2, 3), {}, alone), "");
  ASSERT_EQ(run_jobs({big, job("solo-a", 0, 1, 3200000, 32), job("solo-b", 0, 1, 3200000, 32)}, cluster(2, 3), {},
                     beside),
            "");
  const auto one = read_csv(alone + "/jobs.csv");
  const auto three = read_csv(beside + "/jobs.csv");
  EXPECT_NEAR(cell(three, "big", "end_s"), cell(one, "big", "end_s"), 1e-9 * cell(one, "big", "end_s"));
  EXPECT_EQ(cell(three, "big", "steps"), cell(one, "big", "steps"));
  EXPECT_NEAR(cell(three, "big", "device_s_fast"), cell(one, "big", "device_s_fast"),
              1e-9 * cell(one, "big", "device_s_fast"));
  EXPECT_GT(cell(three, "solo-a", "end_s"), 0.0);  // the neighbours ran and finished
}

TEST(ClusterSim, ASteadyJobStepsSlowerWhenARoundBringsFlowsOntoItsLinks) {
  // Two nodes of two devices, spread. Job a (two workers, one per node) runs steady and alone, so its steps run as one
  // execution through the rounds; b (the same shape) arrives at 15 s and starts at the round of 20 s, and its flows
  // then share a's links. That round must cut a's run: from then on a's all-reduce shares the links whenever b's
  // does, so a ends well after its time alone (one step alone: 0.05 s compute + 0.0468 s all-reduce; 1,032 steps).
  ClusterSimOptions o;
  o.scheduling.placement = scheduler::Placement::kSpread;
  o.scheduling.round_s = 10;
  const auto a = job("a", 0, 2, 33024, 32);
  const auto b = job("b", 15, 2, 33024, 32);
  const std::string alone = test_dir("cut-alone");
  const std::string shared = test_dir("cut-shared");
  ASSERT_EQ(run_jobs({a}, cluster(2, 2), o, alone), "");
  ASSERT_EQ(run_jobs({a, b}, cluster(2, 2), o, shared), "");
  const auto one = read_csv(alone + "/jobs.csv");
  const auto two = read_csv(shared + "/jobs.csv");
  const double alone_end_s = cell(one, "a", "end_s");
  EXPECT_NEAR(alone_end_s, 1032 * (0.05 + 4.0 * 11.7e6 / 1e9), 1e-6 * alone_end_s);
  EXPECT_EQ(cell(two, "a", "steps"), 1032);
  // About 80 s of a's steps beside b's flows, many of them slower (uncut, a would end as alone).
  EXPECT_GT(cell(two, "a", "end_s"), alone_end_s + 3.0);
  EXPECT_GT(cell(two, "b", "end_s"), cell(two, "a", "end_s"));
}

TEST(ClusterSim, OneJobAloneStepsAsOmnilearnSimDoes) {
  // The same job in both simulators: two workers on two nodes (1 GB/s links, no latency), 16 samples each at 320
  // samples/s, ResNet-18's 11.7 M parameters. omnilearn sim times the compute from flop/s: 1e9 flop per sample on
  // 3.2e11 flop/s is 320 samples/s.
  const std::string jobs_dir = test_dir("jobs");
  ASSERT_EQ(run_jobs({job("a", 0, 2, 3200, 32)}, cluster(2, 1), {}, jobs_dir), "");
  auto s = testing::four_worker_scenario({1, 1}, "uniform");
  for (scenarios::NodeSpec& node : s.cluster.workers) {
    node.speed_flops = 3.2e11;
    node.bandwidth_Bps = 1e9;
    node.latency_s = 0.0;
  }
  s.cluster.backbone_bandwidth_Bps = 1e12;
  s.cluster.backbone_latency_s = 0.0;
  s.workload.model.parameters = 11.7e6;
  s.workload.model.gradient_bytes = 4 * 11.7e6;
  s.workload.model.flops_per_sample = 1e9;
  s.workload.model.flops_per_iteration = 0.0;
  s.workload.global_batch = 32;
  s.workload.dataset_samples = 3200;
  s.policy.min_batch = 8;
  s.policy.max_batch = 24;
  const std::string sim_dir = test_dir("sim");
  ASSERT_EQ(testing::run_in_child(s, sim_dir), "");
  const double sim_step = summary_number(sim_dir, "total_time_s") / 100.0;
  const double jobs_step = cell(read_csv(jobs_dir + "/jobs.csv"), "a", "jct_s") / 100.0;
  EXPECT_NEAR(sim_step, 16.0 / 320.0 + 4 * 11.7e6 / 1e9, 1e-9);
  EXPECT_NEAR(jobs_step, sim_step, 1e-9 * sim_step);
}

TEST(ClusterSim, LasPreemptsAndEveryJobStillFinishes) {
  // One device, a long job then a short one: LAS with a low threshold moves the long job down a queue and runs
  // the short one, preempting the long one (a checkpoint and restore of 1 s each).
  ClusterSimOptions o;
  o.scheduler = "las";
  o.scheduling.round_s = 10;
  o.scheduling.las_thresholds = {5.0};
  o.scheduling.checkpoint_s = 1.0;
  o.scheduling.restore_s = 1.0;
  const std::vector<traces::JobSpec> jobs = {job("long", 0, 1, 32000, 32), job("short", 1, 1, 960, 32)};
  const std::string dir = test_dir("las");
  ASSERT_EQ(run_jobs(jobs, cluster(1, 1), o, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_GE(cell(rows, "long", "restarts"), 1);
  EXPECT_LT(cell(rows, "short", "end_s"), cell(rows, "long", "end_s"));
  EXPECT_EQ(cell(rows, "long", "steps"), 1000);
  EXPECT_EQ(cell(rows, "short", "steps"), 30);
  // One device: the jobs' device time never exceeds the makespan.
  EXPECT_LE(cell(rows, "long", "device_s_fast") + cell(rows, "short", "device_s_fast"),
            summary_number(dir, "makespan_s") + 1e-9);
}

TEST(ClusterSim, MaxTimeStopsTheRunAndKeepsWhatWasSimulated) {
  // A job of 100 s (1,000 steps of 0.1 s) stopped at the round of 30 s: not finished, 300 steps, 30 device-s.
  ClusterSimOptions o;
  o.scheduling.round_s = 10;
  o.max_time_s = 30;
  const std::string dir = test_dir("max-time");
  ASSERT_EQ(run_jobs({job("long", 0, 1, 32000, 32)}, cluster(1, 1), o, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("end_s"), "");
  EXPECT_EQ(rows[0].at("jct_s"), "");
  EXPECT_EQ(cell(rows, "long", "steps"), 300);
  EXPECT_NEAR(cell(rows, "long", "device_s_fast"), 30.0, 1e-9);
  EXPECT_EQ(summary_number(dir, "finished"), 0);
  EXPECT_NEAR(summary_number(dir, "makespan_s"), 30.0, 1e-9);
  EXPECT_NE(read_text(dir + "/summary.json").find(R"("stopped": "max-time 30 s")"), std::string::npos);
  // Finish-time fairness is of finished jobs only.
  EXPECT_EQ(rows[0].at("contention"), "");
  EXPECT_EQ(rows[0].at("fair_s"), "");
  EXPECT_EQ(rows[0].at("rho"), "");
  EXPECT_EQ(summary_number(dir, "mean_rho"), 0.0);
  EXPECT_EQ(summary_number(dir, "max_rho"), 0.0);
}

TEST(ClusterSim, FinishTimeFairnessOfAJobAloneIsOne) {
  // Two nodes of one device: the job's 2 workers all-reduce across the links every step. Alone all its life: N = 1,
  // and T_id is its own time: 100 steps of 32 samples at 2 x 320 samples/s (0.05 s) plus the all-reduce of 11.7 M
  // float32 parameters (2(n-1)/n = 1 gradient) over 1 GB/s without latency (0.0468 s).
  const std::string dir = test_dir("rho-alone");
  ASSERT_EQ(run_jobs({job("a", 0, 2, 3200, 32)}, cluster(2, 1), {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  const double t_id = 100.0 * (32.0 / 640.0 + 4.0 * 11.7e6 / 1e9);
  EXPECT_NEAR(cell(rows, "a", "contention"), 1.0, 1e-12);
  EXPECT_NEAR(cell(rows, "a", "fair_s"), t_id, 1e-9);
  EXPECT_NEAR(cell(rows, "a", "jct_s"), t_id, 1e-6);
  EXPECT_NEAR(cell(rows, "a", "rho"), 1.0, 1e-6);
  EXPECT_NEAR(summary_number(dir, "mean_rho"), 1.0, 1e-6);
  EXPECT_NEAR(summary_number(dir, "max_rho"), 1.0, 1e-6);
}

TEST(ClusterSim, FinishTimeFairnessCountsTheWaitForARound) {
  // b arrives at 15 s, after a ended (9.68 s): alone too (N = 1), but it waits for the round of 60 s.
  const std::string dir = test_dir("rho-wait");
  ASSERT_EQ(run_jobs({job("a", 0, 2, 3200, 32), job("b", 15, 2, 3200, 32)}, cluster(2, 1), {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  const double t = 100.0 * (32.0 / 640.0 + 4.0 * 11.7e6 / 1e9);
  EXPECT_NEAR(cell(rows, "b", "contention"), 1.0, 1e-12);
  EXPECT_NEAR(cell(rows, "b", "fair_s"), t, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "rho"), (60.0 - 15.0 + t) / t, 1e-6);
  EXPECT_NEAR(summary_number(dir, "max_rho"), (60.0 - 15.0 + t) / t, 1e-6);
  EXPECT_NEAR(summary_number(dir, "mean_rho"), (1.0 + (60.0 - 15.0 + t) / t) / 2.0, 1e-6);
}

TEST(ClusterSim, FinishTimeFairnessOfTwoJobsUnderFifo) {
  // One node of two devices; two jobs of 2 workers (100 steps of 32 samples, no all-reduce within the node) arrive
  // at 0. FIFO: a runs [0, 5], b waits for the round of 60 s and runs [60, 65].
  const std::string dir = test_dir("rho-fifo");
  ASSERT_EQ(run_jobs({job("a", 0, 2, 3200, 32), job("b", 0, 2, 3200, 32)}, cluster(1, 2), {}, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  ASSERT_NEAR(cell(rows, "a", "jct_s"), 5.0, 1e-9);
  ASSERT_NEAR(cell(rows, "b", "jct_s"), 65.0, 1e-9);
  // a met b all its life: N = 2, a share of 1 device for 2 workers: 3200 samples at 320/s = 10 s.
  EXPECT_NEAR(cell(rows, "a", "contention"), 2.0, 1e-12);
  EXPECT_NEAR(cell(rows, "a", "fair_s"), 10.0, 1e-9);
  EXPECT_NEAR(cell(rows, "a", "rho"), 0.5, 1e-9);
  // b met a for 5 of its 65 s: N = 70/65, a share of 2 x 65/70 devices: 3200 / (320 x 130/70) s.
  const double n_b = 70.0 / 65.0;
  const double t_b = 3200.0 / (320.0 * 2.0 / n_b);
  EXPECT_NEAR(cell(rows, "b", "contention"), n_b, 1e-12);
  EXPECT_NEAR(cell(rows, "b", "fair_s"), t_b, 1e-9);
  EXPECT_NEAR(cell(rows, "b", "rho"), 65.0 / t_b, 1e-9);
  EXPECT_NEAR(summary_number(dir, "mean_rho"), (0.5 + 65.0 / t_b) / 2.0, 1e-9);
  EXPECT_NEAR(summary_number(dir, "max_rho"), 65.0 / t_b, 1e-9);
}

TEST(ClusterSim, NothingRunsPastMaxTimeEvenInARestore) {
  // Rounds of 10 s, a stop at 25 s (between rounds): the long job is preempted at 10 s (LAS, threshold 5 s) and
  // resumes at 20 s with an 8 s restore, which the stop cuts short. On one device no job can progress or hold it
  // beyond 25 s in total.
  ClusterSimOptions o;
  o.scheduler = "las";
  o.scheduling.round_s = 10;
  o.scheduling.las_thresholds = {5.0};
  o.scheduling.restore_s = 8.0;
  o.max_time_s = 25;
  const std::string dir = test_dir("restore");
  ASSERT_EQ(run_jobs({job("long", 0, 1, 32000, 32), job("short", 1, 1, 32000, 32)}, cluster(1, 1), o, dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  ASSERT_EQ(rows.size(), 2u);
  const double steps = cell(rows, "long", "steps") + cell(rows, "short", "steps");
  EXPECT_LE(steps * 0.1, 25.0 + 1e-9);
  EXPECT_LE(cell(rows, "long", "device_s_fast") + cell(rows, "short", "device_s_fast"), 25.0 + 1e-9);
  EXPECT_NEAR(summary_number(dir, "makespan_s"), 25.0, 1e-9);
  EXPECT_EQ(summary_number(dir, "finished"), 0);
}

TEST(ClusterSim, TwoGroupsOfOneKindMakeOneCluster) {
  scenarios::DeviceCluster c = cluster(1, 1);
  c.groups.push_back(cluster(1, 1).groups.front());  // "fast" again: hosts are named by their index, not per group
  const std::string dir = test_dir("two-groups");
  ASSERT_EQ(run_jobs({job("a", 0, 2, 3200, 32)}, c, {}, dir), "");
  EXPECT_EQ(read_csv(dir + "/jobs.csv").size(), 1u);
  EXPECT_EQ(summary_number(dir, "finished"), 1);
}

TEST(ClusterSim, TheSameInputsGiveTheSameBytes) {
  const std::vector<traces::JobSpec> jobs = {job("a", 0, 2, 6400, 64), job("b", 3, 3, 6400, 96),
                                             job("c", 7, 1, 3200, 32)};
  ClusterSimOptions o;
  o.scheduler = "gavel";
  scenarios::DeviceCluster c = cluster(2, 2);
  c.groups.push_back(cluster(2, 2, "slow").groups.front());
  const std::string x = test_dir("x");
  const std::string y = test_dir("y");
  ASSERT_EQ(run_jobs(jobs, c, o, x), "");
  ASSERT_EQ(run_jobs(jobs, c, o, y), "");
  for (const char* f : {"jobs.csv", "allocations.csv"}) {
    EXPECT_FALSE(read_text(x + "/" + f).empty()) << f;
    EXPECT_EQ(read_text(x + "/" + f), read_text(y + "/" + f)) << f;
  }
}

TEST(ClusterSim, JobsItCannotRunAreClearErrors) {
  auto policy = job("odd", 0, 1, 3200, 32);
  policy.batch_policy = "nosuchpolicy";
  const std::string ep = run_jobs({policy}, cluster(1, 1), {}, test_dir("policy"));
  EXPECT_NE(ep.find("job 'odd': batch_policy 'nosuchpolicy'"), std::string::npos) << ep;
  ClusterSimOptions bad_link;
  bad_link.node_bandwidth_Bps = 0.0;
  scenarios::DeviceCluster no_bandwidth = cluster(1, 1);
  no_bandwidth.groups.front().bandwidth_Bps.reset();
  EXPECT_NE(run_jobs({job("a", 0, 1, 3200, 32)}, no_bandwidth, bad_link, test_dir("link")).find("node bandwidth"),
            std::string::npos);
  auto unknown = job("mystery", 0, 1, 3200, 32);
  unknown.model = "nosuchnet";
  const std::string e = run_jobs({unknown}, cluster(1, 1), {}, test_dir("model"));
  EXPECT_NE(e.find("job 'mystery'"), std::string::npos) << e;
  EXPECT_NE(e.find("nosuchnet"), std::string::npos) << e;
  ClusterSimOptions o;
  o.scheduler = "nosuch";
  EXPECT_NE(run_jobs({job("a", 0, 1, 3200, 32)}, cluster(1, 1), o, test_dir("sched")).find("nosuch"),
            std::string::npos);
}

}  // namespace
}  // namespace omnilearn::sim
