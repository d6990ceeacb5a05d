// The joint batch and power-limit study: one BSP job on a mixed GPU cluster (GpuClusterModel), run for a number of
// steps under each policy with the same seeded log-normal jitter on every compute time, reported per epoch with
// 95% intervals over the seeds (docs/energy.md, "Batches and power limits together"). Deterministic for its seeds;
// no shared state: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/energy_control/gpu_cluster_model.h"
#include "omnilearn/traces/gpu_power_table.h"

namespace omnilearn::energy_control {

enum class PowerPolicy {
  kOmniLearnMaxLimits,   // OmniLearn's BSP law (controller registry "omnilearn"), every GPU at its highest limit
  kZeusEqualBatches,     // each kind at the limit of Zeus's best measured (batch, limit) on one GPU; batches B / n
  kZeusAtShare,          // each kind at Zeus's best limit on one GPU at batch B / n; batches B / n
  kOmniLearnZeusLimits,  // OmniLearn's law at kZeusAtShare's limits: the two composed
  kBestStaticGrid,       // best_static_grid() on the noise-free model, found offline
  kJoint,                // JointPowerController: batches and limits every every_n steps, times learnt
};
const char* to_string(PowerPolicy policy);

struct StudyOptions {
  std::int64_t steps = 500;  // BSP steps per run
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  double jitter_sigma = 0.03;  // log-normal σ of each compute time (mean 1), per worker and step
  std::int64_t every_n = 10;   // steps between decisions (OmniLearn and the joint controller)
  double ewma_alpha = 0.1;     // the joint controller's ratio smoothing
  BatchSize grid_step = 8;     // batch spacing of the offline grid
  // What the table does not know: worker k's true compute times are the table's times this factor (empty: 1, the
  // table is the truth). The offline grid is searched on the truth; Zeus's choices and the joint controller's
  // model come from the table.
  std::vector<double> true_time_factor;
};

// One epoch's figures: energy (all GPUs), time and Zeus's cost η E + (1 − η) P_max T.
struct EpochFigures {
  double energy_j = 0.0;
  Seconds time_s = 0.0;
  double cost = 0.0;
};

// A mean with the half-width of its 95% Student-t interval (0 for one value).
struct Interval {
  double mean = 0.0;
  double half_width = 0.0;
};
Interval mean_interval(const std::vector<double>& values);

struct PolicyResult {
  PowerPolicy policy = PowerPolicy::kJoint;
  std::vector<EpochFigures> per_seed;
  Interval energy_j;
  Interval time_s;
  Interval cost;
  Interval joint_saving;  // paired over seeds: 1 − joint's cost / this policy's cost (0 for the joint itself)
  std::string plan;       // the plan in force at the end of the first seed's run, worker by worker "kind b@W"
};

// Builds the model from `table` and `spec`, the static plans, then runs every policy on every seed (the same
// jitter for every policy of a seed). Results in PowerPolicy's order. Errors: the model's, a plan's, a
// controller's.
Result<std::vector<PolicyResult>> run_joint_power_study(const traces::GpuPowerTable& table, const GpuClusterSpec& spec,
                                                        const StudyOptions& options);

// The results as a Markdown table: policy, cost, energy (MJ) and time (s) per epoch as "mean ± half-width", the
// joint controller's paired saving, and the plan.
std::string format_joint_power_table(const std::vector<PolicyResult>& results);

}  // namespace omnilearn::energy_control
