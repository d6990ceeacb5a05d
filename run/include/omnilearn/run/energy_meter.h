// EnergyMeter: a run's energy, accounted from its own per-worker phase records (compute, wait, comm per iteration,
// which every path of both back ends produces) and the power figures of the scenario's `energy:` section and cluster
// preset (docs/energy.md). RunRecorder feeds it; it keeps a few numbers per worker, so huge runs cost nothing more.
// Share rule: a worker at availability f < 1 draws f x its node's power in the phase (the rest of the node belongs
// to whoever took it); down (f = 0) it draws its off power; a change inside a phase is charged piecewise. Not
// thread-safe: one thread per run.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/run/records.h"
#include "omnilearn/run/step_frequency.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/traces/gpu_power_table.h"

namespace omnilearn::run {

// One worker's node: its figures for the whole node (per-core or per-device figures x count).
struct WorkerPower {
  scenarios::DevicePower device;  // per core or device, idle and busy set
  double count = 1.0;             // cores (CPU) or devices (GPU)
  bool gpu = false;
  double idle_w() const { return count * device.idle_w.value_or(0.0); }
  double off_w() const { return count * device.off_w.value_or(0.0); }
  double busy_w(double batch) const { return count * device.busy_at(batch); }
  // Measured slowing states (step_frequency.h). A GPU whose figures come from the measured table: the table's
  // limits below its own, at its batch (`table`, with device.table). A CPU on a platform file: its host's slower
  // pstates (`pstates`). Neither: the assumed law.
  std::shared_ptr<const traces::GpuPowerTable> table;
  std::vector<PowerState> pstates;
  std::string pstates_from;  // the slowing's source label of `pstates`
  // The states at `batch` (the node's watts), slowest last; empty: the law.
  std::vector<PowerState> states(double batch) const;
  // summary.json's energy.sources.slowing label for this worker.
  std::string slowing_source(double power_exponent) const;
};

// A worker's host's own power properties as a SimGrid platform file gives them (the host energy plugin's format,
// SimGrid 3.32): `wattage_per_state`, "idle:busy" or "idle:epsilon:allcores" per power state, comma-separated, and
// `wattage_off`, in watts for the whole host. Read by the simulator from the loaded platform.
struct HostWattage {
  std::string host;
  std::string per_state;  // empty: the host has none
  std::string off;        // empty: none
  int pstate = 0;         // the host's power state, and how many it has
  int pstates = 1;
  int workers = 1;        // workers sharing the host: each gets this share of its figures
  std::vector<double> speeds;  // flop/s per power state (the host's), empty: not known
};

// Watts in a platform file's property: a number >= 0, spaces around it allowed.
std::optional<double> parse_watts(std::string_view text);

// The host's figures at its power state, per worker: idle, busy (all cores: a worker computes on its whole node;
// epsilon is not used) and off, each divided by `workers`. Unset fields where the host has no property. Errors name
// the host and the property.
Result<scenarios::DevicePower> host_wattage_power(const HostWattage& host);

// The host's slower power states as measured slowing states of one of its `workers` (per worker, watts shared): each
// pstate slower than the host's own, its slowdown the speed ratio and its busy power the pstate's last value. Empty
// without several speeds and a wattage_per_state for each (a malformed property is host_wattage_power's error).
std::vector<PowerState> host_pstate_states(const HostWattage& host);

// Each worker's figures: the preset's, then its host's own (`hosts`: one per worker, or empty), overridden by the
// `energy:` section's cpu / gpu fields (the section's defaults when the scenario has none). Errors: not_found for a
// worker without idle and busy figures (saying which and what to give), invalid_argument for a malformed property.
Result<std::vector<WorkerPower>> worker_power(const scenarios::Scenario& scenario,
                                              const std::vector<HostWattage>& hosts = {});

// What a node draws in a waiting or communicating (`comm`) phase under its rule (`energy.wait`, `energy.comm`): its
// idle or busy power, `rule.watts` per core or device x `count`, or auto: on a GPU its blocked figure (per device,
// `blocked_w`) where it has one, else busy (it polls in NCCL); on a CPU idle waiting, busy communicating.
double phase_power_w(const scenarios::PhasePower& rule, double idle_w, double busy_w, double count, bool gpu,
                     bool comm = false, std::optional<double> blocked_w = std::nullopt);
// Where that figure comes from: "idle: <idle's label>", "busy: <busy's label>", "blocked: <its label>" or "scenario".
std::string phase_power_source(const scenarios::PhasePower& rule, const scenarios::DevicePower& device, bool gpu,
                               bool comm);

class EnergyMeter {
 public:
  // The meter of a scenario with an `energy:` section: each worker's figures from the preset, overridden by the
  // section's cpu / gpu fields. A worker without idle and busy figures, or a refused energy.gpu.table, leaves the
  // meter with a reason instead.
  static EnergyMeter for_scenario(const scenarios::Scenario& scenario);
  // The same where each worker's host may bring its own figures (`hosts`: one per worker, or empty): the host's
  // replace the preset's, and the section's cpu / gpu fields still replace both. Errors: a malformed property.
  static Result<EnergyMeter> for_scenario(const scenarios::Scenario& scenario, const std::vector<HostWattage>& hosts);
  EnergyMeter(scenarios::EnergySpec spec, std::vector<WorkerPower> workers);
  // A meter that reports `reason` and no energy.
  static EnergyMeter without_figures(scenarios::EnergySpec spec, std::string reason);

  void iteration(const IterationRecord& r);
  void availability(WorkerId worker, double fraction, Seconds time_s);
  // An evaluation at `time_s`: returns (and remembers, for the energy to target) the joules the run's total counts
  // up to then: the phases recorded so far, each worker's idle (or off, while down) power over the rest of [0,
  // time_s], and the links' joules (set_links). A phase not yet recorded at time_s (ASP: an iteration in flight) is
  // charged as idle there. At the run's end it is summary()'s `joules` (+ links_j).
  double evaluation(Seconds time_s);
  // The network's joules up to a time (a platform file's links with power figures), counted in evaluation() and the
  // energy to target; summary()'s `joules` stays the workers' (the back end writes links_j beside it).
  void set_links(std::function<double(Seconds)> joules_at) { links_at_ = std::move(joules_at); }
  // Worker `worker` gets only `fraction` (in (0, 1]) of its CPU while it computes: other load on the host took the
  // rest (workload.model.host_cpu_available, as `omnilearn validate` measures it), which stretches its compute. It
  // then draws idle + fraction x (busy - idle) while computing: busy power on the CPU it got, idle on the rest, as
  // the testbed's model from CPU time charges it. 1 (the default) changes nothing.
  void set_busy_fraction(WorkerId worker, double fraction);

  // The block for summary.json and energy.csv's rows, for a run of `total_time_s`.
  EnergySummary summary(Seconds total_time_s, std::optional<Seconds> time_to_target_s,
                        std::optional<double> final_accuracy) const;
  bool has_figures() const { return reason_.empty(); }
  const scenarios::EnergySpec& spec() const { return spec_; }

  // Worker k's power at `time_s` for a step's frequency choice (step_frequency.h), scaled by its availability then:
  // computing at `batch` (idle, busy and wait: the `wait` rule; its measured states at that batch), or, with batch 0
  // (outside the step), what it draws meanwhile (idle, or off while down) as `idle_w`. Requires has_figures().
  StepWorker step_power(WorkerId worker, BatchSize batch, Seconds time_s) const;

 private:
  struct Worker {
    std::vector<std::pair<Seconds, double>> fractions{{-std::numeric_limits<double>::infinity(), 1.0}};
    WorkerEnergy e;
    Seconds down_s = 0.0, down_since_s = 0.0, down_in_phases_s = 0.0;
  };
  // summary.json's `energy.sources`: each figure's label over the workers (EnergySummary::sources).
  std::vector<std::pair<std::string, std::string>> sources() const;
  // Worker k's energy over [0, time_s]: its recorded phases, and idle (off while down) power for the rest.
  WorkerEnergy settled(std::size_t k, Seconds time_s) const;
  // Charges [start, start + duration) at `power_w` (the whole node's) under the worker's availability; `count_down`
  // false: a what-if charge that leaves the worker's down time alone.
  double charge(Worker& w, std::size_t k, Seconds start, Seconds duration, double power_w, bool count_down = true);
  // A slowed compute phase of worker k from `start`: `compute_s` long (full speed: `full_s` of it), charged
  // `charged_j`; adds to the α band's and the saving's sums. `frequency` < 1 and `state` -1: the law's factor.
  void slowing_what_ifs(Worker& w, std::size_t k, double batch, Seconds start, Seconds compute_s, Seconds full_s,
                        double frequency, int state, double charged_j, double wait_power);
  // Worker k's compute power in a slowed phase: its measured state's, or the law's at `frequency` and `exponent`,
  // under its busy fraction (set_busy_fraction).
  double slowed_power(std::size_t k, double batch, double frequency, int state, double exponent) const;
  const std::vector<PowerState>& states_at(WorkerId worker, double batch) const;

  scenarios::EnergySpec spec_;
  std::vector<WorkerPower> power_;
  std::vector<Worker> workers_;
  std::vector<double> busy_fraction_;  // per worker (set_busy_fraction); empty: 1 for all
  std::string reason_;
  std::function<double(Seconds)> links_at_;               // set_links; empty: no link figures
  std::vector<std::pair<Seconds, double>> evaluations_;  // (time, evaluation()'s joules)
  // The slowing's what-ifs over the slowed records: their compute joules at α = 1, 2, 3 (law records; measured-state
  // records at their measured power in all three), at the chosen α, and without slowing (busy, then waiting).
  double band_j_[3] = {0.0, 0.0, 0.0};
  double slowed_j_ = 0.0, unslowed_j_ = 0.0;
  bool law_slowed_ = false;
  mutable std::vector<std::pair<double, std::vector<PowerState>>> state_cache_;  // per worker: (batch, its states)
};

// energy.csv's text: one row per worker (testbed runs modelled from CPU time: their own columns).
std::string energy_csv(const EnergySummary& summary);

}  // namespace omnilearn::run
