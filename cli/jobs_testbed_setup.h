// What `omnilearn jobs emulate` and `omnilearn jobs validate` share: their options (a subset of `jobs run`'s, plus
// the testbed's), and the jobs scenario, cluster, device tables, workload and CPU share of each device kind they
// stand for. Stateless: thread-safe.
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"

namespace omnilearn::cli {

struct TestbedSettings {
  double cores_per_tflops = 1.0;  // a device kind's CPU share: its peak_fp32_tflops (kinds table) times this
  double sample_cost_s = 0.001;   // emulator.sample_cost_s of every worker
};

// Adds the scenario options (--cluster, --scheduler, --round, --placement, --job-policy, --las-thresholds, --kinds,
// --speeds, --set, --seed) and the testbed's (--cores-per-tflops, --sample-cost) to `desc`.
void add_testbed_jobs_options(boost::program_options::options_description& desc, TestbedSettings& settings);

struct TestbedJobsSetup {
  scenarios::JobsScenario scenario;
  scenarios::DeviceCluster cluster;
  std::optional<traces::DeviceSpeedTable> speeds;
  std::vector<traces::JobSpec> jobs;
  std::map<std::string, double> kind_cores;  // host cores of one device, by kind
  double cluster_cores = 0.0;                // all devices together
};

// Loads `file` with the options in `vm`, checks that the host can hold the cluster's devices (their cores below
// the CPUs this process may use) and that the scenario has no restart costs or packing.
Result<TestbedJobsSetup> load_testbed_jobs(const std::string& file, const boost::program_options::variables_map& vm,
                                           const TestbedSettings& settings);

// The --set/--seed/... words of `args` that a stage given the same scenario must repeat (every option of
// add_testbed_jobs_options with its value).
std::vector<std::string> scenario_words(const boost::program_options::variables_map& vm);

}  // namespace omnilearn::cli
