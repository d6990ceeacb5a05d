// What the `omnilearn jobs` subcommands share: the shipped device tables, device clusters by preset or file, and
// the workload of a jobs scenario (a job file, or one generated or imported as `jobs generate` / `jobs import` do).
// Stateless functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/job_generators.h"

namespace omnilearn::cli {

// A shipped device table (device-kinds.csv, device-speeds.csv): beside the source tree or the installed data,
// else relative to the working folder.
std::string shipped_device_table(const std::string& file);

// A device cluster: a preset's name (gavel, sia, pollux) or a cluster YAML file.
Result<scenarios::DeviceCluster> load_named_device_cluster(const std::string& name);

// A generated workload and the note its job file carries (the size distribution, seed, rate).
struct GeneratedWorkload {
  std::vector<traces::JobSpec> jobs;
  std::string note;
  double arrival_rate_per_s = 0.0;
};
// Draws a Philly-like workload (`omnilearn jobs generate`); `from` is a Philly-shaped trace or "".
Result<GeneratedWorkload> generate_workload(traces::PhillyLikeOptions options, const std::string& from);

// The jobs of a scenario's workload, and the note to write above them when they were generated or imported
// (empty for a job file). `cluster` sizes a generated load.
struct ScenarioWorkload {
  std::vector<traces::JobSpec> jobs;
  std::string note;
};
Result<ScenarioWorkload> scenario_workload(const scenarios::JobsScenario& s, const scenarios::DeviceCluster& cluster,
                                           const traces::DeviceSpeedTable& speeds);

}  // namespace omnilearn::cli
