// The multi-job testbed's round driver with a scripted segment runner (each job trains at a fixed rate per worker
// on each kind), and the sim-vs-testbed comparison.
#include "omnilearn/emulator/jobs_testbed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "omnilearn/emulator/jobs_comparison.h"
#include "omnilearn/emulator/jobs_testbed_setup.h"

namespace omnilearn::emulator {
namespace {

// Each running job trains sum over its workers of rate[kind] samples/s; a step is 10 samples.
class ScriptedRunner : public SegmentRunner {
 public:
  ScriptedRunner(std::vector<double> totals, std::map<std::string, double> rate)
      : totals_(std::move(totals)), rate_(std::move(rate)), progress_(totals_.size()), speed_(totals_.size(), 0.0) {}

  Status stop(std::size_t job) override {
    stops.push_back(job);
    speed_[job] = 0.0;
    return Status::ok();
  }
  Status run(Seconds now_s, Seconds until_s, const std::vector<SegmentStart>& starts) override {
    for (const SegmentStart& s : starts) {
      EXPECT_DOUBLE_EQ(s.remaining_samples, totals_[s.job] - progress_[s.job].samples);
      double speed = 0.0;
      for (const std::string& k : s.kinds) speed += rate_.at(k);
      speed_[s.job] = speed;
      started.push_back({s.job, now_s});
    }
    for (std::size_t j = 0; j < totals_.size(); ++j) {
      JobProgress& p = progress_[j];
      if (speed_[j] == 0.0 || p.end_s) continue;
      const double left = totals_[j] - p.samples;
      if (now_s + left / speed_[j] <= until_s) {
        p.end_s = now_s + left / speed_[j];
        p.samples = totals_[j];
        speed_[j] = 0.0;
      } else {
        p.samples += speed_[j] * (until_s - now_s);
      }
      p.steps = static_cast<std::int64_t>(p.samples / 10.0);
    }
    return Status::ok();
  }
  JobProgress progress(std::size_t job) const override { return progress_[job]; }

  std::vector<std::size_t> stops;
  std::vector<std::pair<std::size_t, Seconds>> started;

 private:
  std::vector<double> totals_;
  std::map<std::string, double> rate_;
  std::vector<JobProgress> progress_;
  std::vector<double> speed_;
};

TestbedJob job(const std::string& name, Seconds arrival_s, int workers, double samples) {
  TestbedJob j;
  j.name = name;
  j.arrival_s = arrival_s;
  j.workers = j.min_workers = j.max_workers = workers;
  j.total_samples = samples;
  j.throughput = {{"fast", 10.0}};
  return j;
}

// One host of `devices` fast devices.
scheduler::ClusterFacts cluster(int devices) {
  scheduler::ClusterFacts c;
  c.hosts.push_back({"fast-0", "fast", devices});
  return c;
}

TEST(JobsTestbedTest, FifoSecondJobWaitsForTheRoundAfterTheFirstEnds) {
  // a: 2 workers x 5 samples/s, 150 samples: 0..15 s. b arrives at 5 s, gets the devices at the round at 20 s and
  // trains 50 samples at 5/s on one device: 20..30 s.
  const std::vector<TestbedJob> jobs = {job("a", 0.0, 2, 150.0), job("b", 5.0, 1, 50.0)};
  ScriptedRunner runner({150.0, 50.0}, {{"fast", 5.0}});
  JobsTestbedOptions o;
  o.scheduler = "fifo";
  o.scheduling.round_s = 10.0;
  auto s = run_jobs_testbed(jobs, cluster(2), o, runner);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_EQ(s->finished, 2u);
  EXPECT_DOUBLE_EQ(s->jobs[0].start_s, 0.0);
  EXPECT_DOUBLE_EQ(s->jobs[0].end_s, 15.0);
  EXPECT_DOUBLE_EQ(s->jobs[0].device_s.at("fast"), 30.0);  // 2 devices x 15 s
  EXPECT_DOUBLE_EQ(s->jobs[0].mean_step_s(), 1.0);         // 15 s over 15 steps
  EXPECT_DOUBLE_EQ(s->jobs[1].start_s, 20.0);
  EXPECT_DOUBLE_EQ(s->jobs[1].end_s, 30.0);
  EXPECT_DOUBLE_EQ(s->jobs[1].jct_s(), 25.0);
  EXPECT_DOUBLE_EQ(s->makespan_s, 30.0);
  EXPECT_TRUE(runner.stops.empty());
  EXPECT_EQ(s->allocations_csv, "time_s,job,kind,devices\n0,a,fast,2\n10,a,fast,2\n20,b,fast,1\n");
  // jobs.csv in the simulator's schema: batch_policy from the job file, device_s of every kind, no fairness.
  traces::JobSpec a, b;
  a.batch_policy = "omnilearn";
  b.batch_policy = "uniform";
  const std::string csv = run::jobs_csv(testbed_jobs_table(*s, {a, b}, {"fast", "slow"}));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "job,arrival_s,start_s,end_s,jct_s,queueing_s,steps,samples,restarts,batch_policy,workers,device_s_fast,"
            "device_s_slow,contention,fair_s,rho");
  EXPECT_NE(csv.find("\na,0,0,15,15,0,15,150,0,omnilearn,2,30,0,,,\n"), std::string::npos) << csv;
}

TEST(JobsTestbedTest, IdleClusterSkipsToTheNextArrivalsRound) {
  const std::vector<TestbedJob> jobs = {job("late", 35.0, 1, 20.0)};
  ScriptedRunner runner({20.0}, {{"fast", 10.0}});
  JobsTestbedOptions o;
  o.scheduling.round_s = 10.0;
  auto s = run_jobs_testbed(jobs, cluster(1), o, runner);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(s->jobs[0].start_s, 40.0);
  EXPECT_DOUBLE_EQ(s->jobs[0].end_s, 42.0);
  ASSERT_EQ(runner.started.size(), 1u);
  EXPECT_DOUBLE_EQ(runner.started[0].second, 40.0);
}

TEST(JobsTestbedTest, LasPreemptsTheJobWithMoreServiceAndResumesItFromItsCheckpoint) {
  // One device. a (300 samples at 10/s) runs from 0; b arrives at 5. At 20 s a has 20 worker-seconds, past the
  // 15 s threshold, and b none: b runs 20..30 s (100 samples); a resumes at 30 s with its 200 samples and ends at 40.
  const std::vector<TestbedJob> jobs = {job("a", 0.0, 1, 300.0), job("b", 5.0, 1, 100.0)};
  ScriptedRunner runner({300.0, 100.0}, {{"fast", 10.0}});
  JobsTestbedOptions o;
  o.scheduler = "las";
  o.scheduling.round_s = 10.0;
  o.scheduling.las_thresholds = {15.0};
  auto s = run_jobs_testbed(jobs, cluster(1), o, runner);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_EQ(s->finished, 2u);
  EXPECT_DOUBLE_EQ(s->jobs[1].start_s, 20.0);
  EXPECT_DOUBLE_EQ(s->jobs[1].end_s, 30.0);
  EXPECT_DOUBLE_EQ(s->jobs[0].end_s, 40.0);
  EXPECT_EQ(s->jobs[0].restarts, 1);
  EXPECT_EQ(runner.stops, std::vector<std::size_t>{0});
  EXPECT_DOUBLE_EQ(s->jobs[0].device_s.at("fast"), 30.0);  // 0..20 and 30..40
  EXPECT_EQ(s->jobs[0].steps, 30);
}

TEST(JobsTestbedTest, RefusesRestartCostsAndUnknownSchedulers) {
  ScriptedRunner runner({1.0}, {{"fast", 1.0}});
  JobsTestbedOptions o;
  o.scheduling.restore_s = 5.0;
  auto s = run_jobs_testbed({job("a", 0.0, 1, 1.0)}, cluster(1), o, runner);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("restore"), std::string::npos);
  o.scheduling.restore_s = 0.0;
  o.scheduler = "nope";
  EXPECT_FALSE(run_jobs_testbed({job("a", 0.0, 1, 1.0)}, cluster(1), o, runner).is_ok());
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

// Pollux's measured job model is the simulator's: a testbed run is refused naming the file, not run without it.
TEST(JobsTestbedTest, RefusesTheSimulatorsJobModel) {
  for (const bool measured : {true, false}) {
    run::JobsRunSetup setup;
    setup.scenario.source_path = "jobs.yaml";
    setup.scenario.step_model = measured ? "measured" : "ring";
    setup.scenario.statistical_efficiency = !measured;
    auto t = testbed_jobs_setup(setup, TestbedSettings{}, 2);
    ASSERT_FALSE(t.is_ok());
    EXPECT_NE(t.status().message().find("jobs.yaml: step_model measured and statistical_efficiency are the "
                                        "simulator's"),
              std::string::npos)
        << t.status().message();
  }
}

// A first start's restore is a simulator cost like restore itself: refused naming the file and the key.
TEST(JobsTestbedTest, RefusesRestoreAtFirstStart) {
  run::JobsRunSetup setup;
  setup.scenario.source_path = "jobs.yaml";
  setup.scenario.restore_at_first_start = true;
  auto t = testbed_jobs_setup(setup, TestbedSettings{}, 2);
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("jobs.yaml: checkpoint, restore, restore_at_first_start and packing are the "
                                      "simulator's"),
            std::string::npos)
      << t.status().message();
}

TEST(JobsComparisonTest, ReadsRunFoldersAndComparesPerJob) {
  const auto dir = std::filesystem::temp_directory_path() / ("jobs_comparison_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sim");
  std::filesystem::create_directories(dir / "tb");
  // The simulator's columns (no mean_step_s): the step time comes from device-seconds / workers / steps.
  write(dir / "sim" / "jobs.csv",
        "job,arrival_s,start_s,end_s,jct_s,queueing_s,steps,samples,restarts,batch_policy,workers,device_s_fast,"
        "device_s_slow,contention,fair_s,rho\n"
        "a,0,0,20,20,0,100,6400,0,uniform,2,40,0,1,20,1\n"
        "b,5,10,40,35,5,50,1600,1,uniform,1,0,25,1,20,1.75\n");
  write(dir / "sim" / "allocations.csv",
        "time_s,job,kind,devices\n0,a,fast,2\n10,a,fast,2\n10,b,slow,1\n"
        "20,b,slow,1\n30,b,slow,1\n");
  write(dir / "tb" / "jobs.csv",
        "job,arrival_s,start_s,end_s,jct_s,queueing_s,steps,samples,restarts,workers,mean_step_s,device_s_fast,"
        "device_s_slow\n"
        "a,0,0,21,21,0,100,6400,0,2,0.21,42,0\n"
        "b,5,10,45,40,5,50,1600,1,1,0.6,0,30\n");
  write(dir / "tb" / "allocations.csv",
        "time_s,job,kind,devices\n0,a,fast,2\n10,a,fast,2\n10,b,slow,1\n"
        "20,b,slow,1\n30,b,slow,1\n40,b,slow,1\n");
  auto sim = read_run_job_times((dir / "sim").string());
  auto tb = read_run_job_times((dir / "tb").string());
  ASSERT_TRUE(sim.is_ok()) << sim.status().message();
  ASSERT_TRUE(tb.is_ok()) << tb.status().message();
  EXPECT_DOUBLE_EQ((*sim)[0].mean_step_s, 0.2);  // 40 / 2 / 100
  EXPECT_EQ((*sim)[1].allocations, std::vector<std::string>{"1 slow"});
  auto c = compare_job_runs(*sim, *tb, 0.10);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_NEAR(c->jobs[0].jct_error, 1.0 / 21.0, 1e-12);  // (21 - 20) / 21
  EXPECT_TRUE(c->jobs[0].pass);
  EXPECT_NEAR(c->jobs[1].jct_error, 5.0 / 40.0, 1e-12);  // 12.5%: fails at 10%
  EXPECT_FALSE(c->jobs[1].pass);
  EXPECT_TRUE(c->same_allocations);  // b held one slow device one round longer on the testbed: the same decisions
  EXPECT_FALSE(c->pass);
  EXPECT_NE(comparison_table(*c).find("FAIL"), std::string::npos);
  EXPECT_NE(comparison_csv(*c).find("a,20.00,21.00,4.76,"), std::string::npos) << comparison_csv(*c);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace omnilearn::emulator
