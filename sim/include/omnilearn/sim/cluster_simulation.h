// Several training jobs sharing one heterogeneous cluster, simulated on SimGrid (docs/jobs.md, "Running a
// workload"). Each node of a device cluster is a host with one core per device and a link to a non-blocking switch;
// a scheduling policy (omnilearn::scheduler) decides every round which devices each job holds; each running job is
// an actor that steps BSP: its workers compute on their devices at the measured speed of the job's model there
// (traces::DeviceSpeedTable), then all-reduce their gradients as SimGrid flows over the nodes' links, which jobs on
// the same node share, and the job's own batch controller (uniform, omnilearn, ...) resizes its workers' batches
// from the compute times it sees; an ASP job's workers push to and pull from a parameter server on its first node.
// Not thread-safe: one call at a time per process (SimGrid's engine is global).
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/sim/cluster_options.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"

namespace omnilearn::sim {

// The parameters of `model` (for its gradient's bytes): the catalogue's (scenarios::find_model) or a few more
// measured models; an error naming the model otherwise.
Result<double> model_parameters(const std::string& model);

// Everything run_cluster_simulation checks before it starts SimGrid (the jobs, the options, the cluster's kinds):
// call it before claiming a run folder, so that a typo does not replace an earlier run.
Status check_cluster_simulation(const std::vector<traces::JobSpec>& jobs, const scenarios::DeviceCluster& cluster,
                                const traces::DeviceSpeedTable& speeds, const ClusterSimOptions& options);

// Simulates `jobs` on `cluster` with per-model speeds from `speeds`. Writes into options.output_dir (when set):
// jobs.csv (one row per job), allocations.csv (per round, job and kind: the devices held; with packing a last
// column packed_with names the job sharing the device), summary.json; with options.energy, jobs.csv's energy columns
// and summary.json's energy block (docs/energy.md). Errors:
// a job or option the simulator cannot run (naming the job and field), the scheduler's errors, I/O errors.
Result<ClusterSummary> run_cluster_simulation(const std::vector<traces::JobSpec>& jobs,
                                              const scenarios::DeviceCluster& cluster,
                                              const traces::DeviceSpeedTable& speeds, const ClusterSimOptions& options);

}  // namespace omnilearn::sim
