// TestbedEnergyMeter: a testbed run's energy (docs/energy.md, "On the testbed"). Measured by the host's energy
// counters (energy_counter.h: RAPL for CPU workers, NVML for GPU workers) when it has them; otherwise modelled from
// each worker's CPU time, or a GPU run's phase records, at the scenario's power figures, labelled so. The launcher
// samples it while the run trains: the window runs from training's start to the newest iteration record, as the
// summary's total time does. Not thread-safe: the launcher's thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/emulator/energy_counter.h"
#include "omnilearn/run/records.h"

namespace omnilearn::emulator {

// One worker's figures for the modelled energy.
struct CpuTimePower {
  double share_cores = 1.0;  // host cores allotted to it (its CPU share)
  double node_cores = 1.0;   // the emulated node's cores (what the simulator charges)
  double idle_w = 0.0;       // per core
  double busy_w = 0.0;       // per core
};

// The modelled energy of a worker that used `cpu_s` host CPU-seconds over `window_s` at its share, in the emulated
// node's terms: with s = node_cores / share_cores, c = cpu_s * s and n = node_cores, busy c * busy_w and idle
// (n * window_s - c) * idle_w (never below 0). Sets compute_j (busy), idle_j, cpu_s (c) and allotted_core_s.
run::WorkerEnergy modelled_worker_energy(const CpuTimePower& power, Seconds cpu_s, Seconds window_s);

// A process's CPU time (user + system, all its threads) from the text of /proc/PID/stat, with `ticks_per_s` clock
// ticks a second; an error when the text is not such a line.
Result<Seconds> parse_proc_stat_cpu_s(std::string_view stat, double ticks_per_s);
// Process `pid`'s CPU time from /proc/PID/stat; an error naming the file when unreadable.
Result<Seconds> process_cpu_s(pid_t pid);

// A GPU run's summary.json block from its two sources: `counted`, the TestbedEnergyMeter's summary over the GPUs' NVML
// counter `counter` (null when none opened, `counter_reason` then says why), and `phases`, its phase records charged
// at the scenario's figures as the simulator charges them (the recorder's EnergyMeter; absent without figures).
// Source "measured" (the counter's joules, the phases' beside them in modelled_j) when the counter was read over the
// window; else "modelled-phases" with the reason in the note; else the reason alone.
std::optional<run::EnergySummary> gpu_run_energy(std::optional<run::EnergySummary> phases,
                                                 std::optional<run::EnergySummary> counted, const std::string& counter,
                                                 const std::string& counter_reason);

class TestbedEnergyMeter {
 public:
  // Each worker's CPU time so far (seconds, one per worker, in order), or an error.
  using CpuTimes = std::function<Result<std::vector<Seconds>>()>;
  struct Sources {
    std::unique_ptr<EnergyCounter> counter;  // null: the host has none (counter_reason says why)
    std::string counter_reason;
    std::vector<CpuTimePower> workers;  // empty: no power figures (figures_reason says why)
    std::string figures_reason;
    CpuTimes cpu_times;
    std::string cpu_time_origin;  // where cpu_times reads, for the note ("the workers' cgroups (cpuacct)")
  };
  explicit TestbedEnergyMeter(Sources sources) : s_(std::move(sources)) {}

  // Training starts at `now_s` (seconds on the launcher's clock): the window's first reading.
  void start(Seconds now_s);
  // A reading during training: the counter is read every time (so that its wrap is seen); with `window_end` (an
  // iteration record arrived since the last call) the CPU times too, and the window now ends here. A reading that
  // fails leaves the window as it was.
  void sample(Seconds now_s, bool window_end);
  // summary.json's block: source "measured" (the counter's joules over the window; modelled_j beside it when there
  // are figures) or "modelled-cputime" (per worker rows for energy.csv), or a reason when neither is possible.
  run::EnergySummary summary() const;

 private:
  struct Reading {
    Seconds t_s = 0.0;
    std::optional<double> joules;
    std::optional<std::vector<Seconds>> cpu_s;
  };
  Reading read(Seconds now_s, bool cpu);

  Sources s_;
  std::optional<Reading> first_, last_;
  std::optional<double> latest_joules_;  // the newest counter reading, for the window's end
  std::string error_;                    // the first failed reading
};

}  // namespace omnilearn::emulator
