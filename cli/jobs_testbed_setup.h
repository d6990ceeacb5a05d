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
#include "omnilearn/emulator/jobs_testbed_setup.h"

namespace omnilearn::cli {

using emulator::TestbedJobsSetup;
using emulator::TestbedSettings;

// Adds the scenario options (--cluster, --scheduler, --round, --placement, --job-policy, --las-thresholds, --kinds,
// --speeds, --set, --seed) and the testbed's (--cores-per-tflops, --sample-cost) to `desc`.
void add_testbed_jobs_options(boost::program_options::options_description& desc, TestbedSettings& settings);

// Loads `file` with the options in `vm` (run::resolve_jobs_run) and checks that this host's testbed can run it
// (emulator::testbed_jobs_setup, with the CPUs this process may use).
// `out` is the run folder (empty: <outputs.dir>/<name>-testbed).
Result<TestbedJobsSetup> load_testbed_jobs(const std::string& file, const boost::program_options::variables_map& vm,
                                           const TestbedSettings& settings, const std::string& out = "");

// The --set/--seed/... words of `args` that a stage given the same scenario must repeat (every option of
// add_testbed_jobs_options with its value).
std::vector<std::string> scenario_words(const boost::program_options::variables_map& vm);

}  // namespace omnilearn::cli
