// The simulator against the testbed on one job file (`omnilearn jobs validate`): per job, the JCT and the mean step
// time of each (read off the two run folders' jobs.csv) and their relative error, and whether the scheduler gave the
// job the same allocations in both (allocations.csv). Stateless functions: thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::emulator {

// One job of a multi-job run folder (`omnilearn jobs run` or `omnilearn jobs emulate`).
struct RunJobTimes {
  std::string name;
  std::optional<Seconds> jct_s;  // absent when it did not finish
  Seconds mean_step_s = 0.0;     // device-seconds / workers / steps; 0 without steps
  // The allocations it went through, in order, consecutive repeats merged ("2 fast", "1 fast + 1 slow", "-" while
  // waiting after it had run): the scheduler's decisions without their times.
  std::vector<std::string> allocations;
};

// Reads jobs.csv and allocations.csv of a run folder. Errors name the file and line.
Result<std::vector<RunJobTimes>> read_run_job_times(const std::string& run_dir);

struct JobComparison {
  std::string name;
  std::optional<Seconds> sim_jct_s, testbed_jct_s;
  double jct_error = 0.0;  // (testbed - sim) / testbed; 0 when either is missing
  Seconds sim_step_s = 0.0, testbed_step_s = 0.0;
  double step_error = 0.0;  // (testbed - sim) / testbed
  bool same_allocations = false;
  bool pass = false;  // both finished, |jct_error| and |step_error| within the tolerance
};

struct JobsComparison {
  std::vector<JobComparison> jobs;
  double tolerance = 0.10;
  bool same_allocations = false;  // every job
  bool pass = false;              // every job
};

// Compares the jobs of the two runs by name (the testbed's order). An error when a job of one is missing in the other.
Result<JobsComparison> compare_job_runs(const std::vector<RunJobTimes>& sim, const std::vector<RunJobTimes>& testbed,
                                        double tolerance);

// The comparison as CSV: job,sim_jct_s,testbed_jct_s,jct_error_pct,sim_step_s,testbed_step_s,step_error_pct,
// same_allocations,pass.
std::string comparison_csv(const JobsComparison& c);
// The comparison as an aligned text table with a last line saying pass or fail.
std::string comparison_table(const JobsComparison& c);

}  // namespace omnilearn::emulator
