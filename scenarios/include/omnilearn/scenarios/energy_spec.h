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
// or device). kAuto (waiting only): idle on CPU nodes, busy on GPU nodes (a GPU polls in NCCL).
enum class PhasePowerMode { kAuto, kIdle, kBusy, kWatts };

struct PhasePower {
  PhasePowerMode mode = PhasePowerMode::kAuto;
  double watts = 0.0;  // kWatts
};

// Power figures of one core (CPU) or one device (GPU), in watts. busy_by_batch (GPU): [batch, W] points, busy power
// linear in log2(batch) between them and flat outside.
struct DevicePower {
  std::optional<double> idle_w;
  std::optional<double> busy_w;
  std::vector<std::pair<double, double>> busy_by_batch;
  std::optional<double> off_w;
  std::string source;

  bool has_busy() const { return busy_w.has_value() || !busy_by_batch.empty(); }
  // Busy power at `batch`: the curve when there is one, else busy_w (call only when has_busy()).
  double busy_at(double batch) const;
  // Fields set in `over` replace this one's.
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

struct EnergySpec {
  PhasePower wait{PhasePowerMode::kAuto, 0.0};
  PhasePower comm{PhasePowerMode::kBusy, 0.0};
  DevicePower cpu;  // per core
  DevicePower gpu;  // per device
  // BSP: a worker with slack computes at f = compute / (compute + wait) (at least min_frequency), drawing
  // idle + (busy - idle) * f^power_exponent (Perseus-like).
  bool slow_with_slack = false;
  double min_frequency = 0.5;
  double power_exponent = 3.0;
  std::optional<EnergyObjective> objective;  // replaces slow_with_slack's rule: give one of them
};

std::string objective_name(const EnergyObjective& o);  // "energy_within 10", "time_within 5"

std::string phase_power_name(const PhasePower& p);  // "auto", "idle", "busy" or the watts

}  // namespace omnilearn::scenarios
