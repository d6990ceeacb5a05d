// Several jobs on the testbed (docs/jobs.md, "Several jobs on the testbed"): a scheduling policy
// (omnilearn::scheduler, the same seam and policies as `omnilearn jobs run`) decides in rounds on an emulated clock
// which devices each job holds; a SegmentRunner runs each job's segment (its workers on the devices of one
// allocation) and reports what the job trained. The driver reads no clock: the runner keeps the emulated one (start-up
// and pauses off it). Not thread-safe: one driver per runner, used from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scheduler/round_facts.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::emulator {

// One job as the driver schedules it.
struct TestbedJob {
  std::string name;
  Seconds arrival_s = 0.0;
  int workers = 1;  // requested (mean step time: device-seconds / workers / steps)
  int min_workers = 1;
  int max_workers = 1;
  double total_samples = 0.0;
  std::map<std::string, double> throughput;  // one worker's samples/s by kind, as the policy sees it
  bool balances_batches = false;             // the job's batch controller balances batches (not uniform)
};

// A segment to start: job `job` (an index into the driver's jobs) on one device of each of `kinds` (one per worker,
// in slot order), with `remaining_samples` left to train.
struct SegmentStart {
  std::size_t job = 0;
  std::vector<std::string> kinds;
  double remaining_samples = 0.0;
};

// What a job has trained over all its segments (samples and steps of completed steps only), and when it ended on
// the emulated clock, once it has.
struct JobProgress {
  double samples = 0.0;
  std::int64_t steps = 0;
  std::optional<Seconds> end_s;
};

// The seam between the round driver and what runs the jobs (worker processes on this host, or a fake in tests).
class SegmentRunner {
 public:
  virtual ~SegmentRunner() = default;
  // Ends `job`'s running segment (a preemption or a change of devices) at the emulated time of the last run()'s end:
  // its workers stop; what it trained until then is kept (the checkpoint). A step in flight is lost.
  virtual Status stop(std::size_t job) = 0;
  // Starts `starts` at emulated time `now_s` (their start-up is not on the emulated clock), then lets every running
  // segment run until emulated time `until_s`, or until none runs. Segments that end on their own record their end.
  virtual Status run(Seconds now_s, Seconds until_s, const std::vector<SegmentStart>& starts) = 0;
  virtual JobProgress progress(std::size_t job) const = 0;
};

struct JobsTestbedOptions {
  std::string scheduler = "fifo";          // a name of scheduler::make_default_scheduler_registry()
  scheduler::SchedulerOptions scheduling;  // round length, placement, las thresholds (no checkpoint/restore costs)
  Seconds max_time_s = 0.0;                // > 0: stop there (jobs not done are reported so)
  std::function<bool()> stop_requested;    // polled once per round: stop there with an error
  std::function<void(Seconds now_s, std::size_t done, std::size_t total)> on_round;  // progress, once per round
};

struct TestbedJobOutcome {
  std::string name;
  Seconds arrival_s = 0.0;
  Seconds start_s = -1.0;  // first time it held devices; -1 when it never ran
  Seconds end_s = -1.0;    // -1 when it did not finish
  std::int64_t steps = 0;
  double samples = 0.0;
  std::int64_t restarts = 0;               // preemptions, moves and resizes
  std::map<std::string, double> device_s;  // device-seconds held, by kind
  int workers = 1;
  bool finished() const { return end_s >= 0.0; }
  Seconds jct_s() const { return end_s - arrival_s; }
  // Seconds held per step: device-seconds / workers / steps (0 before the first step).
  Seconds mean_step_s() const;
};

struct JobsTestbedSummary {
  std::vector<TestbedJobOutcome> jobs;  // in job order
  Seconds makespan_s = 0.0;
  std::size_t finished = 0;
  std::int64_t rounds = 0;
  // time_s,job,kind,devices: every round's allocation, as `omnilearn jobs run` writes allocations.csv.
  std::string allocations_csv;
  std::string stopped;  // why the run ended before every job did; empty when all ended
};

// Checks the options and jobs (unknown scheduler, checkpoint or restore costs, a job without samples or workers).
Status check_jobs_testbed(const std::vector<TestbedJob>& jobs, const JobsTestbedOptions& options);

// Runs `jobs` on `cluster` (a host per device group, slots = devices; kinds as the jobs' throughputs name them):
// every round (at multiples of round_s; an idle cluster skips to the next arrival's round, as the simulator does)
// the policy decides from the jobs' progress and service; jobs that lose or change devices are stopped, jobs that get
// devices start a segment, and `runner` runs the round. Errors: the checks, the policy's, the runner's, a stop
// request (naming the emulated time).
Result<JobsTestbedSummary> run_jobs_testbed(const std::vector<TestbedJob>& jobs, const scheduler::ClusterFacts& cluster,
                                            const JobsTestbedOptions& options, SegmentRunner& runner);

}  // namespace omnilearn::emulator
