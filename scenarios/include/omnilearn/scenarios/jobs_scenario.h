// JobsScenario: a `kind: jobs` scenario file, what `omnilearn jobs run` simulates: a workload of jobs (a job
// file, generated Philly-like, or imported from a public trace), a device cluster and a scheduler. Parsed with
// the scenario machinery (unknown keys are errors, `--set` overrides, "file:line: field:" messages).
// Plain values and stateless functions: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/energy_spec.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

enum class JobsWorkloadSource { kFile, kGenerate, kImport };

struct JobsWorkload {
  JobsWorkloadSource source = JobsWorkloadSource::kFile;
  std::string file;  // kFile: a job file (traces/JOBS.md), resolved against the scenario's folder
  // kGenerate (as `omnilearn jobs generate`, for the cluster's GPUs and the scenario's seed).
  std::int64_t jobs = 160;
  double load = 1.0;
  std::string from;  // a Philly-shaped trace to draw sizes from ("" = the built-in distribution)
  // kImport (as `omnilearn jobs import`).
  std::string format;  // pollux | philly
  std::string input;   // resolved
  std::string import_cluster;  // philly: keep one virtual cluster
  double min_duration_s = 0.0;
  std::optional<std::pair<double, double>> clip;  // philly: [T0, T1) s from the first arrival
  std::int64_t max_jobs = 0;
  // kGenerate and kImport: how a record becomes a job.
  std::string batch_policy = "uniform";
  std::string mode = "bsp";  // bsp | asp
  std::string reference_device = "t4";
};

struct JobsScenario {
  std::string name;  // the run folder's name (default: the file's stem)
  std::string source_path;
  std::uint64_t seed = 1;
  JobsWorkload workload;
  std::string job_policy;          // every job's batch policy instead of the workload's ("" = keep)
  std::string asp_rule;            // every ASP job's rule instead of the workload's ("" = keep; parse_job_asp_rule)
  std::string cluster = "gavel";   // a preset (gavel, sia, pollux) or a cluster YAML file (resolved)
  std::string scheduler = "fifo";  // fifo | las | gavel | gavel-packed | balanced-mix | ...
  double round_s = 60.0;
  double checkpoint_s = 0.0;
  double restore_s = 0.0;
  bool restore_at_first_start = false;  // on: a job's first start costs `restore` too (Pollux's simulator)
  std::string placement = "pack";  // pack | spread
  std::vector<double> las_thresholds;  // empty: the scheduler's default
  // Pollux's measured job model (docs/jobs.md, "Pollux's measured job model"), both off by default:
  std::optional<double> las_starvation_s;  // set: a waiting job's promotion to the first queue; `off`: never (1e300)
  std::string step_model = "ring";        // ring (one-GPU speed + the ring's flows) | measured (Pollux's steps)
  bool statistical_efficiency = false;    // on: a job trains the samples Pollux's progress takes at its batch
  double node_bandwidth_Bps = 1.25e9;
  double max_time_s = 0.0;
  bool packing = false;  // pack waiting one-worker jobs two to a device where Gavel's measured pair gains
  std::map<std::string, double> parameters;  // MODEL: parameter count
  std::string device_kinds;   // "" = the shipped traces/devices/device-kinds.csv
  std::string device_speeds;  // "" = the shipped traces/devices/device-speeds.csv
  std::string packed_speeds;  // "" = the shipped traces/devices/packed-speeds.csv (with packing)
  std::string outputs_dir = "runs";
  // Present: energy per job and per cluster (docs/energy.md, "Several jobs"). wait and comm as a training scenario's;
  // gpu replaces, field by field, every device kind's figures; cpu and slow_with_slack are refused.
  std::optional<EnergySpec> energy;
};

// Reads a `kind: jobs` file; `overrides` as load_scenario's. `kind:` must be `jobs`.
Result<JobsScenario> load_jobs_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// As load_jobs_scenario, from text; `source_name` names messages and its folder resolves relative paths.
Result<JobsScenario> parse_jobs_scenario(std::string_view yaml_text, const std::string& source_name,
                                         const std::vector<std::string>& overrides = {});

// The resolved scenario, every default written out (the run folder's manifest.json).
nlohmann::ordered_json jobs_scenario_json(const JobsScenario& s);

// A job file's asp_rule (traces/JOBS.md) as the server's rule of that ASP job, spelled as workload.asp.rule
// (docs/asp-rules.md) with the rule's parameter after ':': "" or asgd, staleness-aware, rescaled, dc-asgd or
// dc-asgd:LAMBDA, ssp:S, ringmaster:R or ringmaster:inf. An error saying what was expected.
Result<AspSpec> parse_job_asp_rule(std::string_view text);

}  // namespace omnilearn::scenarios
