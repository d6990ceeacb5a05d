// jobs.csv of a simulated jobs run (`omnilearn jobs run`) in the run layer's one schema (run/jobs_run_folder.h): what
// became of each job, as run_cluster_simulation summarises it. Pure function: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/sim/cluster_options.h"
#include "omnilearn/traces/job_file.h"

namespace omnilearn::sim {

// The simulator's facts of one job that its outcome does not hold.
struct SimulatedJobFacts {
  const traces::JobSpec* spec = nullptr;  // not owned
  std::int64_t dropped_pushes = 0;        // ASP pushes the job's rule dropped
};

// The rows of `summary` (jobs in the order of `facts`), with the columns of `kinds` (the cluster's, sorted); the ASP
// rule's columns when any job names a rule; the energy columns when the summary has energy.
run::JobsTable simulated_jobs_table(const ClusterSummary& summary, const std::vector<SimulatedJobFacts>& facts,
                                    const std::vector<std::string>& kinds);

}  // namespace omnilearn::sim
