// BspDriver: bulk-synchronous data parallelism on a SimGrid platform. Each worker computes its batch on its host
// (with one actor per worker, or, in coordinator mode (SimOptions.bsp_actors), as end times the coordinator computes
// itself: analytic_compute.h); the all-reduce follows (collective_step.h); a coordinator actor closes each step, feeds
// the controller and installs the next plan.
// Not thread-safe: lives in the simulation thread and must not move after start().
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "collective_step.h"
#include "omnilearn/base/status.h"
#include "omnilearn/run/run_writer.h"
#include "omnilearn/run/step_frequency.h"
#include "run_context.h"
#include "training_progress.h"

namespace omnilearn::sim {

class BspDriver {
 public:
  explicit BspDriver(RunContext& context);

  // Whether a run of `workers` workers gets one actor per worker (else a coordinator), and how many actors it
  // creates at most (coordinator mode counts the steppers of its activity path).
  static bool per_worker_actors(const SimOptions& options, std::size_t workers);
  static std::size_t actor_count(const SimOptions& options, std::size_t workers);
  // Whether a BSP run of `scenario` needs a SimGrid host per worker. It does not (build_platform's compact form)
  // when the coordinator computes every computation's end (analytic_compute.h) and every step's all-reduce is
  // analytic whoever takes part: a star's plain ring with more workers that never go down (`never_down_workers`)
  // than SimOptions.flow_allreduce_max_workers, or any all-reduce on a uniform star. Call inside a live engine (it
  // reads SimGrid's CPU model settings).
  static bool needs_worker_hosts(const scenarios::Scenario& scenario, const SimOptions& options,
                                 std::size_t never_down_workers);

  // Creates the actors. Call once, before the engine runs.
  void start();
  // An availability change, already recorded and reported to the controller: a worker that goes down while
  // computing loses its iteration (its execution is cancelled; the analytic path foresaw it).
  void on_availability(WorkerId worker, double fraction);
  // After the engine ran: the first error met (an invalid plan, ...), and the summary fields the driver knows.
  const Status& status() const { return status_; }
  run::RunSummary summary() const;

 private:
  struct Slot {
    simgrid::s4u::ExecPtr exec;  // the running computation, so that a failure can cancel it
    bool participating = false;
    bool aborted = false;
    BatchSize batch = 0;
    double flops = 0.0;       // this step's work (coordinator mode: drawn by the coordinator in worker order)
    double peak_flops = 0.0;  // analytic path: the host's speed in its power state (read_peak_speeds())
    Seconds cancel_s = 0.0;   // when on_availability cancelled `exec` (the steppers' activity path)
    Seconds compute_s = 0.0;  // this step's at full speed, written by the worker before the compute barrier
    double frequency = 1.0;   // energy.objective: the factor it computed at (slow_step)
    int state = -1;           // the measured slowing state it computed in (slow_step), -1: full speed or the law
    Seconds switch_s = 0.0;   // slowing_decision previous: the switch cost it paid this step
    Seconds compute_end_s = 0.0, comm_start_s = 0.0, comm_end_s = 0.0;
  };

  void worker(WorkerId k);
  void coordinator();
  // Coordinator mode: one step's computations, then the all-reduce.
  void run_step_coordinated();
  // Each participant's computation end from its flops, host and speed profile; sleeps until the last, returned.
  Seconds compute_analytic();
  // Reads each host's speed in its power state (they change only at epoch boundaries, with epoch schedules): one
  // read per host and step would be a cache miss per worker, a fifth of a step's CPU at 65,536 workers.
  void read_peak_speeds();
  // The activity path, where the analytic one does not apply (start()): the computations as activities on the
  // participants' hosts, started and awaited by steppers of kWorkersPerStepper workers each.
  void stepper(WorkerId first, WorkerId last);
  static constexpr unsigned kWorkersPerStepper = 64;
  // This step's flop for worker k at batch b (draws its quota phase and jitter from phase_rng_ when modelled).
  double step_flops(WorkerId k, BatchSize b);
  std::size_t prepare_step();
  // A log-normal factor of mean 1 and coefficient of variation `cv` (1 when cv is 0): the part
  // model.compute_jitter_shared of its log-variance from this step's common draw step_z_, the rest from phase_rng_.
  double jitter_factor(double cv);
  // Worker k went down mid-step: its iteration is lost (its all-reduce ends at once).
  void lose(WorkerId k);
  void close_step(Seconds step_start_s);
  // energy.objective, or any slowing decided on earlier steps (slowing_decision previous), once everyone has
  // computed: this step's frequency factors or measured states (run/step_frequency.h) from the meter's power figures
  // and the compute times at full speed (oracle: this step's; previous: predicted from the steps before, with the
  // switch cost where a worker's state changes and the time lost against the oracle's choice counted); each
  // participant's computation then ends at step start + compute / factor (+ its switch). Returns when the last ends
  // (no earlier than now). The first caller of a step decides; the others get the same end. A change of
  // availability during the stretch does not cancel anything.
  Seconds slow_step(Seconds step_start_s);
  // slow_step's decision on earlier steps' times: applies it to the participants `chosen` (true times in `workers`)
  // and returns the compute phase's end.
  Seconds slow_step_on_previous(Seconds step_start_s, const std::vector<run::StepWorker>& workers,
                                const std::vector<WorkerId>& chosen, double other_w);
  // The run's stop condition: the progress's, or (virtual-time training) the target or time budget.
  bool finished() { return progress_.done() || (ctx_.training != nullptr && ctx_.training->done()); }
  void fail(const Status& status);

  RunContext& ctx_;
  TrainingProgress progress_;
  std::vector<Slot> slots_;
  CollectiveStep collective_;         // the all-reduce, and this step's participants
  std::mt19937_64 phase_rng_;         // quota phases of bursting workers and compute jitter, seeded from the scenario
  double step_z_ = 0.0;               // this step's standard normal draw shared by all workers (compute_jitter_shared)
  simgrid::s4u::BarrierPtr start_;    // all workers + coordinator: a step begins (or the run ends)
  simgrid::s4u::BarrierPtr end_;      // all workers + coordinator: the step's all-reduce is complete
  simgrid::s4u::BarrierPtr compute_;  // this step's participants: everyone has computed
  std::int64_t step_ = 0;
  bool objective_ = false;           // the driver slows steps: energy.objective, or slowing decided on earlier steps
  bool previous_ = false;            // slowing_decision previous
  std::optional<run::StepTimePredictor> predictor_;
  std::vector<double> last_level_;   // previous: each worker's state in its last step (PowerState::level, the law's
                                     // factor; -1 full speed)
  Seconds misprediction_s_ = 0.0, switch_s_ = 0.0;
  std::int64_t switches_ = 0;
  std::int64_t slowed_step_ = -1;    // the step slow_step decided last, and its end
  Seconds slowed_end_s_ = 0.0;
  bool done_ = false;
  bool per_worker_ = true;  // one actor per worker (else the coordinator drives every step)
  bool analytic_ = false;   // coordinator mode without activities (else steppers start them)
  Seconds end_time_s_ = 0.0;
  Status status_;
};

}  // namespace omnilearn::sim
