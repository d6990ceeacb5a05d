// The testbed's side of a resolved jobs run (run/jobs_run_setup.h; `omnilearn jobs emulate`, `jobs validate`): the
// CPU share of each device kind on this host, the jobs and cluster as the round driver (jobs_testbed.h) and the
// segment runner (segment_processes.h) take them, and the run folder's files in the run layer's one schema
// (run/jobs_run_folder.h). Stateless functions: thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/jobs_testbed.h"
#include "omnilearn/emulator/segment_processes.h"
#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/run/jobs_run_setup.h"

namespace omnilearn::emulator {

struct TestbedSettings {
  double cores_per_tflops = 1.0;  // a device kind's CPU share: its peak_fp32_tflops (kinds table) times this
  double sample_cost_s = 0.001;   // emulator.sample_cost_s of every worker
};

// A jobs run the testbed can hold: the resolved run, and the host cores of each device kind.
struct TestbedJobsSetup {
  run::JobsRunSetup run;
  std::map<std::string, double> kind_cores;  // host cores of one device, by kind
  double cluster_cores = 0.0;                // all devices together
};

// Checks that the testbed can run `setup` (no restart costs or packing: a job's restart is its real workers'; the
// cluster's kinds in the tables; the cluster's cores within `host_cpus`) and gives each kind its cores.
Result<TestbedJobsSetup> testbed_jobs_setup(run::JobsRunSetup setup, const TestbedSettings& settings, int host_cpus);

// What run_jobs_testbed and ProcessSegmentRunner take for `setup`.
struct TestbedJobsPlan {
  std::vector<TestbedJob> jobs;
  std::vector<SegmentJob> segment_jobs;
  scheduler::ClusterFacts cluster;  // a host per node, its devices as slots
  JobsTestbedOptions options;       // the scenario's scheduler, round, placement, thresholds and max time
};
// Errors: a job without epochs (the testbed trains epochs, not to a target), a job's speed the tables lack.
Result<TestbedJobsPlan> testbed_jobs_plan(const TestbedJobsSetup& setup);

// jobs.csv's rows of a testbed run (run::jobs_csv; no finish-time fairness), with the columns of `kinds`.
run::JobsTable testbed_jobs_table(const JobsTestbedSummary& summary, const std::vector<traces::JobSpec>& jobs,
                                  const std::vector<std::string>& kinds);
// summary.json of a testbed run: kind "jobs-testbed", the scheduler, round, jobs, finished, makespan, rounds and,
// when it ended early, why.
nlohmann::ordered_json testbed_summary_json(const JobsTestbedSummary& summary, const scenarios::JobsScenario& s);

}  // namespace omnilearn::emulator
