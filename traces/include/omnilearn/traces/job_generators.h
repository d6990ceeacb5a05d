// Synthetic job workloads: Philly-like jobs (sizes and durations drawn from the Philly trace's distribution, or
// from a given sample of it) arriving as a Poisson process at a chosen load. Deterministic for a seed
// (std::mt19937_64 and portable transforms). Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/job_importer.h"

namespace omnilearn::traces {

struct PhillyLikeOptions {
  std::size_t jobs = 160;
  // Offered load: arrival rate x mean GPU-seconds per job / cluster GPUs (1 = as much work arrives as the
  // cluster can do at the reference speed).
  double load = 1.0;
  std::int64_t cluster_gpus = 64;
  std::uint64_t seed = 1;
  // Empty: the built-in distribution (philly_size_distribution_note()). Otherwise sizes are drawn uniformly from
  // these records (for example those of an imported Philly trace).
  std::vector<JobSize> sizes;
  PhillyConversion conversion;  // how a (GPUs, duration) record becomes a job (philly_job)
};

struct GeneratedJobs {
  std::vector<JobSpec> jobs;
  double arrival_rate_per_s = 0.0;  // the Poisson rate used: load x cluster_gpus / mean_gpu_seconds
  double mean_gpu_seconds = 0.0;    // E[gpus x duration] of the distribution drawn from
};

// Jobs named <model>-<k> (k = 0, 1, ... in arrival order) with exponential inter-arrival times of mean 1 / arrival_rate_per_s,
// the first arriving after one such gap.
Result<GeneratedJobs> generate_philly_like(const PhillyLikeOptions& options);

// The built-in distribution: P(gpus) and duration quantiles per GPU count, with durations log-linear between
// quantiles. Its mean GPU-seconds is exact for that model.
struct SizeClass {
  std::int64_t gpus;
  double probability;
  std::vector<std::pair<double, Seconds>> quantiles;  // (p, duration_s), p from 0 to 1
};
const std::vector<SizeClass>& philly_size_distribution();
double mean_gpu_seconds(const std::vector<SizeClass>& distribution);
// Where the built-in distribution comes from, for file comments and --help.
const char* philly_size_distribution_note();

}  // namespace omnilearn::traces
