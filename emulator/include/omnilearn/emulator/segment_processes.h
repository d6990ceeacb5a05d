// ProcessSegmentRunner: the testbed's SegmentRunner (jobs_testbed.h). Each segment of a job is one `omnilearn
// emulate` run (the single-job launcher: its own worker processes, cgroups and batch controller) of a scenario
// written for it: the job's model and batch policy, one worker per device given, each held to its kind's CPU share,
// training the samples the job has left. Segments of different jobs run side by side. The emulated clock runs only
// while the running segments train together: while a segment starts up (library loading, data, rendezvous) every
// other one's workers are paused (SIGSTOP/SIGCONT), and between rounds all are. A segment's progress and end are
// read off its run folder (iterations.csv, config.json), its rows' times mapped onto the emulated clock.
// Not thread-safe: one caller; the destructor stops every segment still running (each launcher removes its cgroups).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/emulator/jobs_testbed.h"

namespace omnilearn::emulator {

// What a segment's scenario takes from its job.
struct SegmentJob {
  std::string name;
  std::string model = "lenet";  // the testbed trains LeNet (its network) on Fashion-MNIST
  std::int64_t global_batch = 64;
  std::string batch_policy = "uniform";
  std::uint64_t seed = 1;
};

struct ProcessSegmentOptions {
  std::string omnilearn;  // the omnilearn program, whose `emulate` runs each segment
  std::string dir;        // segment k of job J: scenario DIR/J-k.yaml, run folder DIR/J-k/, output DIR/J-k.log
  std::map<std::string, double> kind_cores;     // host cores a device of each kind gets (its workers' CPU quota)
  double sample_cost_s = 0.001;                 // emulator.sample_cost_s: CPU seconds of a sample at a full core
  double cpu_period_s = 0.01;                   // the quota's CFS period
  Seconds startup_timeout_s = 300.0;            // a segment that reports no step by then fails the run
  bool replace = false;                         // replace an earlier run's files in a segment's run folder
  std::function<bool()> stop_requested;         // polled while waiting: stop with an error
  std::function<void(const std::string&)> log;  // progress lines; default none
};

// The scenario YAML of `job`'s segment on `kinds`, training `samples` samples.
Result<std::string> segment_scenario_yaml(const SegmentJob& job, const std::vector<std::string>& kinds,
                                          std::int64_t samples, const ProcessSegmentOptions& options,
                                          const std::string& name);

class ProcessSegmentRunner : public SegmentRunner {
 public:
  ProcessSegmentRunner(std::vector<SegmentJob> jobs, ProcessSegmentOptions options);
  ~ProcessSegmentRunner() override;
  ProcessSegmentRunner(const ProcessSegmentRunner&) = delete;
  ProcessSegmentRunner& operator=(const ProcessSegmentRunner&) = delete;

  Status stop(std::size_t job) override;
  Status run(Seconds now_s, Seconds until_s, const std::vector<SegmentStart>& starts) override;
  JobProgress progress(std::size_t job) const override;

  // Stops every running segment (SIGCONT, then SIGINT to its launcher, which stops its workers and removes its
  // cgroups) and waits for them. Called by the destructor; safe to call twice.
  void stop_all();

 private:
  struct Segment;
  struct Interval {
    long long wall_a_ns = 0;
    long long wall_b_ns = -1;  // -1 while open
    Seconds emu_a_s = 0.0;
  };
  Seconds to_emulated(long long wall_ns) const;
  Status start(const SegmentStart& s, Seconds now_s);
  void signal_workers(const Segment& s, int sig) const;
  void signal_all(int sig) const;
  // Completed steps and samples of `s` whose end lies at or before `limit_ns` on the wall clock; the latest end.
  struct Counted {
    double samples = 0.0;
    std::int64_t steps = 0;
    long long last_end_ns = 0;
  };
  Counted count(const Segment& s, long long limit_ns) const;
  Status finish(Segment& s, bool stopped);

  std::vector<SegmentJob> jobs_;
  ProcessSegmentOptions options_;
  std::vector<std::unique_ptr<Segment>> running_;  // by job: the running segment, or null
  std::vector<int> segments_;                      // by job: segments started
  std::vector<JobProgress> done_;                  // by job: what its ended segments trained
  std::vector<Interval> clock_;
};

}  // namespace omnilearn::emulator
