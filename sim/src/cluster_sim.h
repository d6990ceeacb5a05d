// ClusterSim: the multi-job simulator behind run_cluster_simulation (omnilearn jobs run), shared by its files:
// cluster_simulation.cpp (jobs, platform, the scheduler's rounds on scheduler::RoundDriver, each job's actor),
// cluster_sim_steps.cpp (BSP and one-worker stepping, runs of steps across rounds, cancelling a step),
// cluster_sim_asp.cpp (ASP stepping), cluster_sim_output.cpp (the summary and the run folder).
// Private to sim/. One per simulation; runs inside one SimGrid engine, its actors under its own mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <string>
#include <vector>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/scheduler/round_driver.h"
#include "omnilearn/scheduler/scheduling_policy.h"
#include "omnilearn/sim/cluster_energy.h"
#include "omnilearn/sim/cluster_options.h"
#include "omnilearn/traces/device_speeds.h"
#include "pollux_job_hooks.h"

namespace omnilearn::sim::cluster {

namespace sg4 = simgrid::s4u;

// One job as the simulation runs it.
struct Job {
  const traces::JobSpec* spec = nullptr;
  std::size_t index = 0;
  double total_samples = 0.0;
  double gradient_bytes = 0.0;
  std::map<std::string, double> throughput;  // one worker's samples/s per kind, at the job's per-worker batch
  // The model's speeds by kind index (facts_.kinds()), resolved once per model (ClusterSim::curves_of_model_).
  const std::vector<traces::SpeedCurve>* curves = nullptr;
  std::vector<std::size_t> worker_kinds;     // the kind index of each worker the job's actor steps now
  scenarios::AspSpec asp;                    // an ASP job's server rule (its asp_rule)
  std::int64_t dropped_pushes = 0;           // ASP pushes its rule dropped (Ringmaster)
  JobOutcome outcome;
  Seconds waiting_since_s = 0.0;
  std::vector<scheduler::DeviceSlot> slots;  // held now (sorted)
  std::uint64_t generation = 0;              // bumped at every change of `slots`
  Seconds resume_at_s = 0.0;                 // restart cost: no step before this
  Seconds held_since_s = 0.0;                // when it got `slots`, for its device time
  bool running_actor = false;
  std::string packing_key;  // with packing: model/batch of a one-worker job (the packed table's key); else empty
  // Packing: the job sharing this job's device and the fraction of its speed alone it keeps, from the round that
  // packs them until the round after the partner leaves; "" and 1 otherwise.
  std::string packed_with;
  double packed_fraction = 1.0;
  std::map<std::string, double> packed_device_s;  // the part of outcome.device_s spent packed, by kind
  AdaptiveBatch adaptive;  // the batch a scheduler that adapts batches chose (pollux_job_hooks.h)
  // Steady stepping (several workers): the last two steps took the same time with the same plan. Reset when the
  // job's devices change.
  Seconds last_step_s = 0.0;
  int steady_steps = 0;
  // The steps running as one execution now (run_steps), which may span rounds: when they began (negative: none),
  // each one's time and batch, how many, and whether a round that changes what they share cuts them (those of
  // several workers). The scheduler reads the samples they completed by a round.
  struct StepRun {
    Seconds since_s = -1.0;
    Seconds step_s = 0.0;
    BatchSize batch = 0;
    std::int64_t steps = 0;
    bool shares = false;
  } run;
  bool cut = false;  // a round cut the run: it ends with the step in progress, then steps go one by one
  // Samples done by now_s, counting the completed steps of the run in progress as a preemption would keep them.
  double samples_at(Seconds now_s) const;
  std::vector<sg4::ActivityPtr> in_flight;  // the step's activities, cancelled when the job loses its devices
  // The job's timeline: what it did from when to when ("waiting", "restoring", "running on 4 v100").
  struct Segment {
    Seconds start_s;
    Seconds end_s;
    std::string what;
  };
  std::vector<Segment> segments;
  Seconds segment_start_s = 0.0;
  std::string segment;  // the open one; empty before arrival and after the end
  // Closes the open segment at now_s and opens `what` (nothing: "") there. A segment may be opened in the future (the
  // end of a restart); one entered before it began never happened, and those before are clipped to now_s.
  void enter(Seconds now_s, std::string what) {
    if (!segment.empty() && now_s > segment_start_s) segments.push_back({segment_start_s, now_s, segment});
    while (!segments.empty() && segments.back().end_s > now_s) {
      if (segments.back().start_s >= now_s) {
        segments.pop_back();
      } else {
        segments.back().end_s = now_s;
      }
    }
    segment = std::move(what);
    segment_start_s = now_s;
  }
};

struct Host {
  sg4::Host* host = nullptr;
  std::string kind;
  std::size_t kind_index = 0;  // in facts_.kinds()
  int jobs = 0;                // jobs holding a device here now
  int talkers = 0;             // those of them whose workers span several nodes (their flows use this node's link)
};

// One worker's samples/s at `batch` on the kind of index `kind`, from the job's resolved curves (the table's
// speed(); its error for a batch below 1).
inline Result<double> worker_speed(const Job& job, std::size_t kind, BatchSize batch) {
  if (batch < 1) return Status::invalid_argument("batch " + std::to_string(batch) + ": expected >= 1");
  return (*job.curves)[kind].samples_per_s(batch);
}

class ClusterSim {
 public:
  ClusterSim(const scenarios::DeviceCluster& cluster, const traces::DeviceSpeedTable& speeds,
             const ClusterSimOptions& options)
      : cluster_(cluster), speeds_(speeds), options_(options) {}

  Status prepare(const std::vector<traces::JobSpec>& specs);
  Result<ClusterSummary> run();

 private:
  // One job's facts: its samples, ASP rule, batch policy (checked), gradient size and speed curves (each model's
  // resolved once, in curves_of_model_).
  Status prepare_job(const traces::JobSpec& s, std::size_t j, const std::vector<std::string>& kinds);
  // The packed pairs that gain, for each two (model, batch) keys of one-worker jobs and each kind.
  void prepare_packing(const std::vector<std::string>& kinds);
  void build_platform();
  void scheduler_actor();
  // A job's facts that do not change (its id, demand, throughputs); refresh_facts sets the rest as of now_s.
  scheduler::JobFacts job_facts(const Job& job) const;
  void refresh_facts(const Job& job, Seconds now_s, scheduler::JobFacts& f) const;
  Status decide(Seconds now_s);
  void job_actor(std::size_t j);
  Status step(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
              const std::vector<std::string>& kinds, std::int64_t& step_index, bool& interrupted);
  // A BSP step that ran to its end at now: its energy, the controller's reports and next plan, the steady count.
  Status step_done(Job& job, controller::Controller& ctl, const std::vector<std::string>& kinds,
                   const std::vector<BatchSize>& batches, BatchSize global_batch, const std::vector<Seconds>& compute_s,
                   Seconds t0, std::int64_t& step_index);
  // ASP: each worker computes, pushes its gradient to the parameter server (on the node of the job's first device)
  // and pulls the parameters back with its next batch, until the job's samples are done or its devices are taken.
  Status asp_steps(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                   std::int64_t& step_index, bool& interrupted);
  Status solo_steps(Job& job, BatchSize batch, sg4::Host* host, std::int64_t& step_index, bool& interrupted);
  // Runs `step_s`-long steps of `batch` samples up to the next round (or the job's end; at least one) as one
  // execution on `host`, a preemption keeping the completed ones. With `through`, the steps run up to the job's end
  // instead, across rounds: a round that takes the devices keeps the completed ones; one that gives the job a new
  // batch, or with `shares` changes what they share (steps_repeat() no longer holds), cuts them after the step in
  // progress, which ends as it began.
  void run_steps(Job& job, Seconds step_s, BatchSize batch, sg4::Host* host, bool through, bool shares,
                 std::int64_t& step_index, bool& interrupted);
  // The rest of the step in progress when a round cut its run (`done` completed, counted with it); false when the
  // devices were taken meanwhile.
  bool finish_cut_step(Job& job, sg4::Host* host, Seconds t0, std::int64_t& done, std::uint64_t generation);
  // Cuts the runs of steps that the round's allocation changed the sharing of (see run_steps).
  void cut_changed_runs();
  // Whether `job`'s next steps up to the round take what its last one took (run as one execution): its last steps
  // were steady, and either no other job holds a device on its nodes, or its batches never change (uniform) and no
  // other job's flows can meet its own (each worker computes on its own device; flows meet only on the nodes' links):
  // it has no flows (one node), or no other job with flows (spanning several nodes) holds a device on its nodes. A
  // job whose controller may still move its batches keeps stepping beside others, where the controller sees them.
  bool steps_repeat(const Job& job) const;
  void release(Job& job, Seconds now_s);
  // Gives `job` the devices `slots` (empty: none), keeping each host's count of jobs on it.
  void set_slots(Job& job, std::vector<scheduler::DeviceSlot> slots);
  // Energy: every device of `job` busy at its batch from t0 to now (a solo job's or an ASP job's steps, a step cut by a
  // preemption). Nothing without options.energy.
  void charge_busy(const Job& job, const std::vector<std::string>& kinds, const std::vector<BatchSize>& batches,
                   Seconds t0);
  ClusterSummary summarise(Seconds end_s) const;
  // Opens allocations.csv's stream (with an output folder) and writes its header; flush_allocations appends the rows
  // held once they pass 1 MiB (`all`: every one): a long run holds no more.
  Status open_allocations();
  void flush_allocations(bool all);
  Status write(const ClusterSummary& summary);
  Status write_timeline(const run::JobsRunWriter& out) const;

  const scenarios::DeviceCluster& cluster_;
  const traces::DeviceSpeedTable& speeds_;
  const ClusterSimOptions& options_;
  scheduler::ClusterFacts facts_;
  std::vector<Host> hosts_;
  std::vector<Job> jobs_;
  std::map<std::string, std::vector<traces::SpeedCurve>> curves_of_model_;  // each model's, resolved once (Job::curves)
  std::optional<scheduler::RoundDriver> driver_;  // the rounds: jobs present, their facts, the policy (prepare())
  sg4::ConditionVariablePtr changed_;    // a job's slots changed, or the run ended
  sg4::MutexPtr mutex_;
  std::size_t done_ = 0;
  bool over_ = false;
  Status status_;
  std::string allocations_csv_;                       // rows not yet appended to allocations_out_
  std::optional<AtomicFileStream> allocations_out_;   // allocations.csv, written as the run goes (with an output dir)
  Status allocations_status_;                         // the stream's first error, reported at the end
  std::int64_t rounds_ = 0;
  std::vector<scheduler::PackedPairFacts> packed_pairs_;
  Seconds end_s_ = 0.0;
  Seconds next_round_s_ = 0.0;                // when the scheduler decides next
  std::optional<ClusterEnergyMeter> energy_;  // with options.energy
};

// The share of its device a job's worker is charged: half when packed with another job.
inline double energy_share(const Job& job) { return job.packed_with.empty() ? 1.0 : 0.5; }

// Cancels what the job's step has running in SimGrid.
void cancel_step(Job& job);
// Whether the job's devices were taken (the scheduler moved it on since `generation`, or the run is over): then
// cancels what it has running, forgets it, and marks the step `interrupted`.
bool devices_taken(Job& job, std::uint64_t generation, bool over, bool& interrupted);

}  // namespace omnilearn::sim::cluster
