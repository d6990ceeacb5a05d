// The options and results of a multi-job simulation (run_cluster_simulation, cluster_simulation.h): what the
// simulator's own parts share without depending on the simulation itself. Plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/scheduler/scheduling_policy.h"
#include "omnilearn/sim/cluster_energy.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/metric_curves.h"
#include "omnilearn/traces/packed_speeds.h"
#include "omnilearn/traces/pollux_tables.h"

namespace omnilearn::sim {

struct ClusterSimOptions {
  std::string scheduler = "fifo";  // a name of scheduler::make_default_scheduler_registry()
  // With scheduling.packing: the measured pairs (not owned; required then). A packed worker computes at its speed
  // alone times the fraction the table gives it with its partner.
  const traces::PackedSpeedTable* packed_speeds = nullptr;
  // Measured metric curves (not owned): a job with a target and no epochs trains the samples its model's curve
  // nearest its global batch takes to reach the target (traces::MetricCurveTable::samples_to_target); required then.
  // A job with epochs trains epochs x dataset_samples, target or not.
  const traces::MetricCurveTable* metric_curves = nullptr;
  // Pollux's measured job model (not owned; required when either switch is on; docs/jobs.md, "Pollux's measured
  // job model"): measured_steps: a BSP job's step takes Pollux's measured time for its placement and global batch
  // instead of its devices' speed and the ring's flows; statistical_efficiency: a job with epochs trains the samples
  // Pollux's progress takes at its global batch. job_model_source is written to summary.json with them.
  const traces::PolluxJobModel* pollux = nullptr;
  bool measured_steps = false;
  bool statistical_efficiency = false;
  std::string job_model_source;
  scheduler::SchedulerOptions scheduling;          // round length, checkpoint/restore seconds, placement
  double node_bandwidth_Bps = 1.25e9;              // a node's link when its group states none (10 Gb/s)
  Seconds node_latency_s = 5e-6;                   // likewise
  Seconds max_time_s = 0.0;                        // > 0: stop the simulation there (jobs not done are reported so)
  std::map<std::string, double> model_parameters;  // parameters of models model_parameters() does not know
  std::optional<ClusterEnergyOptions> energy;      // set: account energy per job and cluster (docs/energy.md)
  std::string output_dir;                          // the run folder; empty: write nothing
  std::vector<std::string> argv;                   // the command line, recorded in summary.json
  std::function<bool()> stop_requested;            // polled once per round: stop there, keeping what was written
  std::function<void(Seconds now_s, std::size_t done, std::size_t total)> on_round;  // progress, once per round
};

// What became of one job.
struct JobOutcome {
  std::string name;
  Seconds arrival_s = 0.0;
  Seconds start_s = -1.0;  // first time it held devices; -1 when it never ran
  Seconds end_s = -1.0;    // when its last step ended; -1 when it did not finish
  std::int64_t steps = 0;
  double samples = 0.0;                    // trained (steps lost to a preemption not counted)
  std::int64_t restarts = 0;               // preemptions, moves and resizes it went through
  std::map<std::string, double> device_s;  // device-seconds held, by kind
  // Finish-time fairness (docs/jobs.md), finished jobs only: the jobs it met on average (N, itself included) and
  // T_id, its time alone on 1/N of the cluster.
  double contention = 0.0;
  Seconds fair_s = 0.0;
  bool finished() const { return end_s >= 0.0; }
  Seconds jct_s() const { return end_s - arrival_s; }         // finished jobs only
  double rho() const { return jct_s() / fair_s; }             // finished jobs only: JCT / T_id
  Seconds queueing_s() const { return start_s - arrival_s; }  // jobs that ran
};

struct ClusterSummary {
  std::vector<JobOutcome> jobs;  // in job-file order
  Seconds makespan_s = 0.0;      // the last job's end (or where the simulation stopped)
  double mean_jct_s = 0.0;       // over the finished jobs
  double median_jct_s = 0.0;
  double p99_jct_s = 0.0;
  std::size_t finished = 0;
  std::map<std::string, double> utilisation;  // by kind: device-seconds held / (devices x makespan)
  double mean_rho = 0.0;                      // over the finished jobs; 0 when none
  double max_rho = 0.0;
  std::int64_t rounds = 0;
  std::optional<ClusterEnergy> energy;  // with options.energy
};

}  // namespace omnilearn::sim
