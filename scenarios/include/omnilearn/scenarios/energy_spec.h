// EnergySpec: a scenario's `energy:` section (docs/energy.md). Present, it switches energy reporting on; the power
// figures of each worker come from the cluster preset (cluster_preset.h) and are overridden field by field here.
// Plain values.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace omnilearn::scenarios {

// What a worker draws in a phase that is not computing: its idle power, its busy power, or a fixed figure (per core
// or device). kAuto: waiting idle on CPU nodes, communicating busy on them; on GPU nodes both at the device's
// blocked figure (DevicePower::blocked_w) where it has one, else busy (a GPU polls in NCCL).
enum class PhasePowerMode { kAuto, kIdle, kBusy, kWatts };

struct PhasePower {
  PhasePowerMode mode = PhasePowerMode::kAuto;
  double watts = 0.0;  // kWatts
};

// Where a figure comes from, as summary.json's `energy.sources` says it: one of the labels below, then what in
// brackets ("measured table (v100 cifar100/shufflenetv2/adadelta, 250 W)").
inline constexpr const char* kFromMeasuredTable = "measured table";  // Zeus's zeus-power.csv
inline constexpr const char* kFromPlatform = "platform pstates";     // a platform file's wattage_per_state
inline constexpr const char* kFromPreset = "preset";                 // a preset's documented figure, cited
inline constexpr const char* kFromAssumedLaw = "assumed law";        // a rule or assumption, not a measurement
inline constexpr const char* kFromScenario = "scenario";             // the `energy:` section's own figure

// energy.gpu.table: a GPU's figures from the measured table (traces/devices/zeus-power.csv), names as the table's.
struct GpuTableRef {
  std::string kind;      // "v100"
  std::string workload;  // "imagenet/resnet50/adadelta"
  double power_limit_w = 0.0;
  bool refuse_outside = true;  // a batch outside the measured ones: refused (the section) or flat (a preset's curve)
};

// Power figures of one core (CPU) or one device (GPU), in watts. busy_by_batch (GPU): [batch, W] points, busy power
// linear in log2(batch) between them and flat outside. `table`: busy_by_batch (and, from the section, idle) are to
// be read from the measured table (run::resolve_gpu_table). idle_from / busy_from: each figure's source label.
struct DevicePower {
  std::optional<double> idle_w;
  std::optional<double> busy_w;
  std::vector<std::pair<double, double>> busy_by_batch;
  std::optional<double> off_w;
  std::string source;
  std::string idle_from, busy_from;
  std::optional<GpuTableRef> table;
  // A GPU's measured draw while blocked (waiting at the barrier, in NCCL): what `auto` waiting and communication
  // charge on a GPU node that has it (read from the table); without it, `auto` is busy on GPUs.
  std::optional<double> blocked_w;
  std::string blocked_from;

  bool has_busy() const { return busy_w.has_value() || !busy_by_batch.empty(); }
  // Busy power at `batch`: the curve when there is one, else busy_w (call only when has_busy()).
  double busy_at(double batch) const;
  // Fields set in `over` replace this one's, with their labels ("scenario (its source)" where `over` has none).
  void override_with(const DevicePower& over);
};

// energy.objective (BSP): each step, the frequency factors of its participants, the slowest included, chosen on the
// step's time-energy trade-off (run/step_frequency.h): the shortest step within `percent`% of its least energy, or
// the least energy within `percent`% of its shortest time.
struct EnergyObjective {
  enum class Kind { kEnergyWithin, kTimeWithin };
  Kind kind = Kind::kEnergyWithin;
  double percent = 0.0;
};

// How a step's slowing is decided (slow_with_slack, objective): on the step's own full-speed times, known only once
// it has computed (oracle: an upper bound, free and instant), or on the steps before it, in discrete states, paying
// a switch cost at each change of state (previous: as a governor would run; docs/energy.md, "Slowing as it would
// run").
enum class SlowingDecision { kOracle, kPrevious };

struct EnergySpec {
  PhasePower wait{PhasePowerMode::kAuto, 0.0};
  PhasePower comm{PhasePowerMode::kAuto, 0.0};
  DevicePower cpu;  // per core
  DevicePower gpu;  // per device
  // BSP: a worker with slack computes at f = compute / (compute + wait) (at least min_frequency), drawing
  // idle + (busy - idle) * f^power_exponent (Perseus-like).
  bool slow_with_slack = false;
  double min_frequency = 0.5;
  double power_exponent = 3.0;
  std::optional<EnergyObjective> objective;  // replaces slow_with_slack's rule: give one of them
  SlowingDecision slowing_decision = SlowingDecision::kOracle;
  double switch_cost_s = 0.01;  // previous: a worker's computation is this much longer in a step it changes state
};

std::string slowing_decision_name(SlowingDecision d);  // "oracle", "previous"

std::string objective_name(const EnergyObjective& o);  // "energy_within 10", "time_within 5"

std::string phase_power_name(const PhasePower& p);  // "auto", "idle", "busy" or the watts

}  // namespace omnilearn::scenarios
