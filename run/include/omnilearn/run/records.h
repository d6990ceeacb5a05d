// The records of a run folder (DESIGN.md §4): what both back ends report, row by row, and the summary. Plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/run/stop_reason.h"

namespace omnilearn::run {

// One worker's iteration. Times in the run's clock (simulated or wall seconds since the run started).
struct IterationRecord {
  WorkerId worker = 0;
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  Seconds start_s = 0.0;
  Seconds compute_s = 0.0;
  Seconds comm_s = 0.0;
  Seconds wait_s = 0.0;
  BatchSize batch = 0;
  std::optional<double> loss;
  std::optional<double> accuracy;
  std::optional<std::int64_t> staleness;  // ASP: updates applied since this worker pulled
  double frequency = 1.0;  // energy.objective: the factor it computed at (compute_s is then the slowed time)
  int power_state = -1;    // the measured slowing state it computed in (step_frequency.h), -1: full speed or the law
  Seconds switch_s = 0.0;  // slowing_decision previous: the state switch's cost, inside compute_s
};

// One controller decision (every call that consulted the policy). plans.csv is long: one row per worker.
struct PlanRecord {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  Seconds time_s = 0.0;
  std::string reason;        // controller::to_string(PlanReason)
  bool changed = false;
  double imbalance = 0.0;
  std::vector<BatchSize> batch;
  std::vector<double> weight;
};

// An availability change that the back end applied.
struct AvailabilityRecord {
  Seconds time_s = 0.0;
  WorkerId worker = 0;
  double fraction = 1.0;
};

// Test accuracy measured during a run (testbed; the simulator has none).
struct EvaluationRecord {
  Seconds time_s = 0.0;
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  double loss = 0.0;
  double accuracy = 0.0;
};

// One worker's energy (energy.csv): joules and seconds per phase. idle: the run's time outside its iterations.
struct WorkerEnergy {
  double compute_j = 0.0, comm_j = 0.0, wait_j = 0.0, idle_j = 0.0;
  Seconds compute_s = 0.0, comm_s = 0.0, wait_s = 0.0, idle_s = 0.0;
  // Testbed runs modelled from CPU time (source "modelled-cputime"): compute_j is the busy part, idle_j the rest;
  // the worker's CPU time and its allotted core-time over the window, in the emulated node's cores.
  Seconds cpu_s = 0.0, allotted_core_s = 0.0;
  double joules() const { return compute_j + comm_j + wait_j + idle_j; }
};

// summary.json's `energy` block (EnergyMeter, or the testbed's TestbedEnergyMeter). Without power figures only
// `reason` is set.
struct EnergySummary {
  std::string reason;  // why there is no energy ("no power figures for worker 0 (...)"); empty when there is
  // Testbed runs only (empty in the simulator's, and then not written): "measured" (the host's energy counters),
  // "modelled-cputime" (the workers' CPU time at the power figures) or "modelled-phases" (EnergyMeter), and a note
  // on what the figure covers.
  std::string source, note;
  std::optional<Seconds> cpu_s, window_s;  // measured and modelled-cputime: the workers' CPU time, the window
  std::optional<double> modelled_j;        // measured: the modelled-cputime figure of the same window, beside it
  double joules = 0.0, average_power_w = 0.0;
  double compute_j = 0.0, comm_j = 0.0, wait_j = 0.0, idle_j = 0.0;
  std::string wait;    // the waiting rule ("idle", "busy", "auto" or watts)
  bool slow_with_slack = false;
  std::optional<double> links_j;  // a platform file's links with power figures (not in joules: the workers')
  std::string objective;          // energy.objective's name (objective_name); empty without one
  std::string slowing_decision;   // "previous" where set (the default, oracle, is not written)
  // Where some worker slowed under the assumed law: the run's joules had its exponent been each of 1, 2, 3 (the same
  // factors), and the slowing's saving then, in % of the run's energy without slowing on the same timeline.
  struct AlphaPoint {
    double alpha = 0.0, joules = 0.0, saving_pct = 0.0;
  };
  std::vector<AlphaPoint> alpha_band;
  // Where each figure came from: ("busy" | "idle" | "wait" | "comm" | "slowing", its labels joined by " | " when the
  // workers differ), the labels of energy_spec.h (kFromMeasuredTable...). Empty where not modelled by EnergyMeter.
  std::vector<std::pair<std::string, std::string>> sources;
  std::optional<double> energy_to_target_j;        // virtual-time runs that reached the target
  std::optional<double> joules_per_accuracy_point;  // virtual-time runs: joules / (final accuracy x 100)
  std::vector<WorkerEnergy> workers;                // energy.csv's rows (not in summary.json)
};

struct RunSummary {
  std::string policy;
  std::string mode;            // "bsp" or "asp"
  std::int64_t workers = 0;
  std::int64_t iterations = 0;  // BSP: global steps; ASP: updates applied by the server
  std::int64_t epochs = 0;
  Seconds total_time_s = 0.0;
  Seconds mean_iteration_s = 0.0;
  double idle_fraction = 0.0;   // waiting time / (compute + comm + wait), over all workers
  std::vector<Seconds> epoch_time_s;  // time each epoch took
  std::optional<double> mean_staleness;  // ASP
  std::optional<std::int64_t> max_staleness;
  std::optional<Seconds> time_to_target_s;
  std::optional<double> final_accuracy;
  std::int64_t decisions = 0;
  std::int64_t batch_changes = 0;
  StopReason stop_reason = StopReason::kNone;  // why the run ended (StopRule::reason)
  std::map<std::string, double> extra;  // back-end specific numbers (controller overhead, ...)
  std::optional<EnergySummary> energy;  // scenarios with an `energy:` section
};

// The record of a controller result (a plan that consulted the policy) in epoch `epoch`.
PlanRecord plan_record(const controller::Plan& plan, std::int64_t epoch);

}  // namespace omnilearn::run
