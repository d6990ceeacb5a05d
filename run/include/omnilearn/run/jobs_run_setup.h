// What a jobs scenario resolves to before either back end runs it (`omnilearn jobs run`, `jobs emulate`, `jobs
// validate`), as ns-3's helpers turn a topology description into installed objects: the scenario (a `kind: jobs` YAML
// or a job file) with the command line's overrides, the device cluster, the device tables, the workload's jobs (a job
// file, or generated or imported) with the scenario's job policy and ASP rule applied, each kind's power figures and
// the run folder. The back ends turn it into their options (sim/cluster_sim_setup.h,
// emulator/jobs_testbed_setup.h). Stateless functions: thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/scenarios/energy_spec.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/job_generators.h"
#include "omnilearn/traces/metric_curves.h"
#include "omnilearn/traces/pollux_tables.h"
#include "omnilearn/traces/packed_speeds.h"

namespace omnilearn::run {

// A shipped device table (device-kinds.csv, device-speeds.csv, packed-speeds.csv, metric-curves.csv): beside the
// source tree or the installed data, else relative to the working folder.
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

// An override of a scenario key ("placement=\"spread\"") and the option it stands for ("--placement spread"; empty
// for --set), so that an error about it names the option the user typed.
struct ScenarioOverride {
  std::string text;
  std::string option;
};

// The jobs scenario `jobs` names, a `kind: jobs` YAML or a job file read as {kind: jobs, workload: {file: JOBS}},
// with `overrides` in order. Errors: a training scenario (naming `omnilearn sim`), the parser's (an override's error
// names its option).
Result<scenarios::JobsScenario> load_jobs_run_scenario(const std::string& jobs,
                                                       const std::vector<ScenarioOverride>& overrides);

struct JobsRunRequest {
  std::string jobs;                         // the scenario or job file
  std::vector<ScenarioOverride> overrides;  // the command line's, in order
  bool energy = false;                      // account energy also without an `energy:` section (--energy)
  std::string out;                          // the run folder; empty: <outputs.dir>/<name><out_suffix>
  std::string out_suffix;                   // "-testbed" for the testbed
  // Device kinds and speeds a scenario does not name: the shipped tables (the simulator), or an error (the testbed,
  // whose kinds must state the CPU share of each device).
  bool shipped_device_tables = true;
};

// Everything a jobs run needs, resolved once. Not copied once a back end's options point into it.
struct JobsRunSetup {
  scenarios::JobsScenario scenario;
  scenarios::DeviceCluster cluster;
  std::optional<traces::DeviceSpeedTable> speeds;         // always set
  std::optional<traces::PackedSpeedTable> packed_speeds;  // with packing
  std::optional<traces::MetricCurveTable> metric_curves;  // when a job has a target and no epochs
  std::optional<traces::PolluxJobModel> pollux;           // with step_model: measured or statistical_efficiency
  std::vector<traces::JobSpec> jobs;                      // the scenario's job_policy and asp_rule applied
  std::string workload_note;                              // non-empty: generated or imported, for workload.csv
  std::map<std::string, scenarios::DevicePower> power;    // with energy: each kind's figures, energy.gpu applied
  std::string out_dir;
};

// Loads the scenario and all it names. Errors: the scenario's, a table's or the cluster's (naming the file), a device
// kind of the cluster the tables lack, the workload's.
Result<JobsRunSetup> resolve_jobs_run(const JobsRunRequest& request);

}  // namespace omnilearn::run
