// The energy of a multi-job run (docs/energy.md, "Several jobs"): each job's joules from its workers' phase records
// on their devices, and the cluster's as the jobs' plus the idle power of the devices no job holds. ClusterSim feeds
// a ClusterEnergyMeter; the meter keeps a few numbers per job and kind. Not thread-safe: one per run.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/energy_spec.h"

namespace omnilearn::sim {

// What `jobs run --energy` charges: the wait and communication settings of a scenario's `energy:` section, and each
// device kind's per-GPU figures (idle and busy required; scenarios::device_kind_power for the shipped kinds).
// auto (wait, comm): the kind's blocked figure where it has one (read from the measured table), else busy (a GPU
// polls in NCCL), as run::phase_power_w charges single runs' GPUs.
struct ClusterEnergyOptions {
  scenarios::PhasePower wait{scenarios::PhasePowerMode::kAuto, 0.0};
  scenarios::PhasePower comm{scenarios::PhasePowerMode::kBusy, 0.0};
  std::map<std::string, scenarios::DevicePower> power;  // by kind
};

// One job's joules, split by what its devices did.
struct JobEnergy {
  double compute_j = 0.0;
  double comm_j = 0.0;
  double wait_j = 0.0;
  double idle_j = 0.0;  // held but in no step: restoring, or its workers not yet started
  double joules() const { return compute_j + comm_j + wait_j + idle_j; }
};

struct KindEnergy {
  double jobs_j = 0.0;                // the jobs' joules on devices of this kind
  double unallocated_device_s = 0.0;  // devices x seconds no job held, from 0 to the makespan
  double unallocated_idle_j = 0.0;    // those at the kind's idle power
  double idle_w = 0.0;                // per device
};

struct ClusterEnergy {
  std::vector<JobEnergy> jobs;  // in job order
  std::map<std::string, KindEnergy> kinds;
  double jobs_j = 0.0;
  double unallocated_idle_j = 0.0;
  double total_j = 0.0;          // jobs_j + unallocated_idle_j
  double average_power_w = 0.0;  // total_j / makespan
  std::string wait;              // the wait setting, as the section writes it
  std::string comm;
  // summary.json's `energy.sources`: ("busy" | "idle" | "wait" | "comm", "<kind>: <label>" per kind of the cluster,
  // joined by " | "), the labels of energy_spec.h (kFromMeasuredTable...), as single runs write them.
  std::vector<std::pair<std::string, std::string>> sources;
};

// Checks the options against the cluster's kinds: every kind needs idle and busy figures (an error naming it).
Status check_cluster_energy(const ClusterEnergyOptions& options, const std::vector<std::string>& kinds);

class ClusterEnergyMeter {
 public:
  // `options` checked by check_cluster_energy for the cluster's kinds; `jobs` the number of jobs.
  ClusterEnergyMeter(ClusterEnergyOptions options, std::size_t jobs);

  // Job `job` held `device_s` device-seconds of `kind` at `share` of each device (1/2 when packed with another job).
  void held(std::size_t job, const std::string& kind, Seconds device_s, double share);
  // One step of job `job`: worker k on kinds[k] at batches[k] computed compute_s[k], then waited until the slowest
  // (wait_s[k]) and communicated comm_s; each device at `share`. It is remembered for repeat_last.
  void step(std::size_t job, const std::vector<std::string>& kinds, const std::vector<double>& batches,
            const std::vector<Seconds>& compute_s, const std::vector<Seconds>& wait_s, Seconds comm_s, double share);
  // `steps` (fractional: a preempted one counts its elapsed part) more of the job's last step().
  void repeat_last(std::size_t job, double steps);
  // Every device of the job busy at its batch for `seconds` (a step cut by a preemption, ASP workers).
  void busy(std::size_t job, const std::vector<std::string>& kinds, const std::vector<double>& batches, Seconds seconds,
            double share);

  // The run's energy: a job's held time in no phase at idle power; each kind's unallocated device-seconds,
  // capacity x makespan less what the jobs held, at idle power.
  ClusterEnergy summary(const std::map<std::string, int>& capacity, Seconds makespan_s) const;

 private:
  struct Charge {  // one step's joules and device-seconds, by kind
    JobEnergy e;
    std::map<std::string, double> joules, device_s;
  };
  struct Job {
    JobEnergy e;
    std::map<std::string, double> held_s;   // share-weighted device-seconds held
    std::map<std::string, double> phase_s;  // share-weighted device-seconds in phases
    std::map<std::string, double> phase_j;
    Charge last;
  };
  double busy_w(const std::string& kind, double batch) const;
  double phase_w(const scenarios::PhasePower& p, const std::string& kind, double batch, bool comm) const;
  std::vector<std::pair<std::string, std::string>> sources(const std::map<std::string, int>& capacity) const;
  void add(Job& job, const Charge& c, double times);

  ClusterEnergyOptions options_;
  std::vector<Job> jobs_;
};

}  // namespace omnilearn::sim
