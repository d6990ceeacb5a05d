// The run folder of several jobs on one cluster (`omnilearn jobs run`, `omnilearn jobs emulate`; docs/jobs.md, "The
// run folder"): one schema for both back ends. jobs.csv (one row per job), allocations.csv (per round, job and kind:
// the devices held), summary.json, manifest.json, the simulator's timeline.json and, for a generated or imported
// workload, workload.csv. Every file is written atomically (base/atomic_file.h). Stateless functions and a writer
// that holds only the folder's path: thread-safe as the files they write are distinct.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/run/jobs_run_setup.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/traces/job_file.h"

namespace omnilearn::run {

// A job's joules (docs/energy.md, "Several jobs"): total = compute + comm + wait + idle.
struct JobJoules {
  double total_j = 0.0;
  double compute_j = 0.0;
  double comm_j = 0.0;
  double wait_j = 0.0;
  double idle_j = 0.0;
};

// One job's row of jobs.csv, as either back end fills it.
struct JobRow {
  std::string name;
  Seconds arrival_s = 0.0;
  Seconds start_s = -1.0;  // first time it held devices; -1 when it never ran (start_s, queueing_s empty)
  Seconds end_s = -1.0;    // -1 when it did not finish (end_s, jct_s empty)
  std::int64_t steps = 0;
  double samples = 0.0;
  std::int64_t restarts = 0;
  std::string batch_policy;
  std::int64_t workers = 1;                // requested
  std::map<std::string, double> device_s;  // device-seconds held by kind; a kind absent held none
  // Finish-time fairness (finished jobs, where the back end computes it): N, T_id, rho; empty cells otherwise.
  std::optional<double> contention;
  std::optional<double> fair_s;
  std::optional<double> rho;
  std::string asp_rule;  // with JobsTable::asp_rules
  std::int64_t dropped_pushes = 0;
  std::optional<JobJoules> energy;  // with JobsTable::energy
};

// The row's fields every back end's job outcome has (name, arrival_s, start_s, end_s, steps, samples, restarts,
// device_s); the caller adds the rest.
template <class Outcome>
JobRow job_row(const Outcome& o) {
  JobRow r;
  r.name = o.name;
  r.arrival_s = o.arrival_s;
  r.start_s = o.start_s;
  r.end_s = o.end_s;
  r.steps = o.steps;
  r.samples = o.samples;
  r.restarts = o.restarts;
  r.device_s = o.device_s;
  return r;
}

struct JobsTable {
  std::vector<std::string> kinds;  // the cluster's device kinds: the device_s_<kind> columns, in this order
  bool asp_rules = false;          // the asp_rule and dropped_pushes columns (the job file names a rule)
  bool energy = false;             // the energy columns (every row has JobRow::energy then)
  std::vector<JobRow> rows;        // in job order
};

// jobs.csv: job,arrival_s,start_s,end_s,jct_s,queueing_s,steps,samples,restarts,batch_policy,workers,
// device_s_<kind>...,contention,fair_s,rho[,asp_rule,dropped_pushes][,energy_j,compute_j,comm_j,wait_j,idle_j].
// Numbers in their shortest exact form; text quoted as RFC 4180 says where it must be; empty cells where not known.
// A job's mean step time is sum(device_s_*) / workers / steps.
std::string jobs_csv(const JobsTable& table);

// allocations.csv: its header ("time_s,job,kind,devices", then ",packed_with" with packing), and one row: at
// `time_s`, `job` holds `devices` devices of `kind` (with packing: sharing them with `packed_with`, or "").
std::string allocations_csv_header(bool packing);
std::string allocations_csv_row(Seconds time_s, std::string_view job, std::string_view kind, int devices,
                                const std::optional<std::string>& packed_with = std::nullopt);

// Writes the files of a jobs run into `dir` (a folder the caller claimed with RunFolder::claim; run_folder_files
// names every file below, so --force replaces them). Each call writes one file atomically; errors name the file.
class JobsRunWriter {
 public:
  explicit JobsRunWriter(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  // manifest.json: {"scenario": scenario, then `extra`'s entries in order, then "omnilearn_version": version}.
  Status write_manifest(const nlohmann::ordered_json& scenario, const nlohmann::ordered_json& extra,
                        const std::string& version) const;
  // workload.csv: the jobs a scenario generated or imported, with `note` above them (traces/JOBS.md).
  Status write_workload(const std::vector<traces::JobSpec>& jobs, const std::string& note) const;
  Status write_jobs(const JobsTable& table) const;
  Status write_allocations(std::string_view csv) const;
  // A run too large to hold its tables writes them piece by piece: allocations.csv or timeline.json as a stream,
  // in place once committed (base/atomic_file.h).
  Result<AtomicFileStream> open_stream(std::string_view file) const;
  // summary.json: `summary` indented by 2, then a newline.
  Status write_summary(const nlohmann::ordered_json& summary) const;

 private:
  std::string path(std::string_view file) const;
  std::string dir_;
};

// Claims setup.out_dir for a jobs run (RunFolder::claim; with `replace`, an earlier run's files there are replaced),
// then writes manifest.json (the resolved scenario, `manifest_extra`'s entries, `version`) and, for a generated or
// imported workload, workload.csv. Call it once the run's checks passed, so that a typo replaces nothing.
Result<std::unique_ptr<RunFolder>> start_jobs_run_folder(const JobsRunSetup& setup, bool replace,
                                                         const nlohmann::ordered_json& manifest_extra,
                                                         const std::string& version);

}  // namespace omnilearn::run
