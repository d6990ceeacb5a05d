// Calibration (`omnilearn calibrate`): measures on this host the testbed worker's compute time (the BSP worker's
// own forward+backward step, in `omnilearn-emulate-worker --calibrate`) against batch size at a full core, fits
// t = a + c·b, and measures how faithfully a cgroup CPU quota turns a target share into achieved CPU and
// throughput (the throttle-fidelity table). Writes a model profile the simulator loads. Not thread-safe; one
// calibration at a time per process (it owns one worker process and, with cgroup access, one cgroup).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

struct CalibrationOptions {
  static scenarios::EmulatorSpec lenet() {
    scenarios::EmulatorSpec s;
    s.network = Network::kLeNet;
    return s;
  }

  // The model, its data and its emulated cost, as a scenario's testbed settings name them: network (resolved:
  // lenet, resnet, or torchscript with model_file, input_shape, loss), sample_cost_s (0: the network's own cost),
  // train_data (else Fashion-MNIST from data_source, decompressed into cache_dir).
  scenarios::EmulatorSpec settings = lenet();
  std::vector<BatchSize> batches = {8, 16, 32, 48, 64, 96, 128};  // batch sweep, at a full core
  std::vector<double> shares = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};  // of one core
  BatchSize share_batch = 32;      // batch of the share sweep
  int reps = 20;                   // timed steps per point
  int warmup = 3;                  // untimed steps before them
  int rounds = 5;                  // passes over the batch sweep, pooled per batch (host drift spreads evenly)
  double period_s = 0.010;         // CFS period of the quota (the testbed's default)
  std::string cpuset;              // pin the worker to these CPUs ("" = no pinning)
  bool share_sweep = true;         // false: batch sweep only
  std::string worker_executable;   // "" = default_worker_executable()
  std::function<void(const std::string&)> log;  // progress lines; default: none
};

// A batch's step times, pooled over the rounds: each step's CPU time with a one-thread worker (its time on a full
// core, whatever a neighbour's preemption adds to its wall time), else its wall time.
struct BatchTiming {
  BatchSize batch = 0;
  int reps = 0;
  double mean_s = 0.0;
  double median_s = 0.0;
  double min_s = 0.0;                // the fastest step: the one the law is fitted to
};

// Least-squares line y = fixed + per_unit·x, with its coefficient of determination (of the weighted fit).
struct LinearFit {
  double fixed = 0.0;
  double per_unit = 0.0;
  double r2 = 0.0;
};
// Needs >= 2 points with distinct x. `weights` (empty: all 1; else one > 0 per point) weigh the squared residuals.
Result<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y,
                             std::span<const double> weights = {});
// The fit of relative residuals ((y - line) / y: weights 1 / y^2, y > 0), so that the small batches' times, which
// the testbed's throttled workers run, count as much as the large ones'.
Result<LinearFit> fit_linear_relative(std::span<const double> x, std::span<const double> y);

struct FidelityRow {
  double target_share = 0.0;         // of one core
  double achieved_share = 0.0;       // CPU time used (cpuacct.usage / cpu.stat usage_usec) / wall time
  double throughput_samples_s = 0.0;
  double relative_throughput = 0.0;  // vs the same batch at share 1.0
  double slowdown = 0.0;             // 1 / relative_throughput
};

struct CalibrationReport {
  std::string network;               // "lenet", "resnet" or "torchscript:<file name>"
  std::int64_t parameters = 0;
  double forward_macs = 0.0;         // per sample
  int threads = 1;
  double sample_cost_s = 0.0;        // as asked for (0: the network's own cost)
  std::vector<BatchTiming> batches;
  LinearFit fit;                     // fastest step time (s) against batch, relative fit: fixed = a, per_unit = c
  std::vector<FidelityRow> fidelity; // empty when the share sweep did not run
  std::string share_sweep_skipped;   // why not, when it did not run
};

// Runs the calibration. An error means nothing useful was measured (worker program or dataset missing, worker
// died); without cgroup write access the share sweep is skipped and the reason is in the report.
Result<CalibrationReport> run_calibration(const CalibrationOptions& options);

// The measured model profile named `name`: parameters, flops_per_sample (3 x forward MACs x 2), the measured law
// t = measured_fixed_s + measured_per_sample_s * b, and flops_per_iteration (the fixed cost at the measured speed),
// each to six significant digits.
scenarios::ModelProfile calibrated_profile(const CalibrationReport& report, const std::string& name);
// calibrated_profile as a profile file (scenarios::model_profile_yaml), with a comment header saying how it was
// measured (host, date, network, batches, R^2).
std::string profile_yaml(const CalibrationReport& report, const std::string& name);
// target_share,achieved_share,throughput_samples_s,relative_throughput,slowdown
std::string fidelity_csv(const CalibrationReport& report);

}  // namespace omnilearn::emulator
