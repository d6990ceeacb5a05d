// The jobs simulator's hooks into Pollux's measured job model (traces::PolluxJobModel; docs/jobs.md, "Pollux's
// measured job model"): a job's samples with statistical efficiency, its step time on a placement, and, under a
// scheduler that adapts batches (goodput), its goodput by GPU count and the switch to the batch chosen. Functions of
// their arguments (a job's AdaptiveBatch is its own): thread-safe for distinct jobs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scheduler/round_facts.h"
#include "omnilearn/sim/cluster_options.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/pollux_tables.h"

namespace omnilearn::sim {

// Checks that `job` runs on Pollux's model (its model is one of Pollux's applications, every kind is `t4`, where
// Pollux measured; an ASP job is refused with step_model measured) and, with statistical efficiency, replaces
// `total_samples` (epochs x dataset) by the samples Pollux's progress takes at the job's global batch. A job with
// a target and no epochs keeps its samples. Errors name the job.
Status apply_pollux_job_model(const ClusterSimOptions& options, const traces::JobSpec& job,
                              const std::vector<std::string>& kinds, double& total_samples);

// GPUs per node of a job's workers, given each worker's host in slot order (sorted by host).
template <class Host>
std::vector<int> workers_per_node(const std::vector<Host>& hosts) {
  std::vector<int> p;
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    if (k == 0 || hosts[k] != hosts[k - 1]) p.push_back(0);
    ++p.back();
  }
  return p;
}

// A job of Pollux's model whose global batch the scheduler chooses (the goodput scheduler: Pollux's co-adaptation):
// the batch it trains at and where its progress stood when that batch began. batch 0: the job file's batch.
struct AdaptiveBatch {
  BatchSize batch = 0;
  double epochs_at = 0.0;                       // epochs of Pollux's progress done when `batch` began
  double samples_at = 0.0;                      // samples trained then
  std::vector<BatchSize> candidates;            // the batches it may train at, ascending
  std::vector<std::vector<double>> throughput;  // [n-1][c]: samples/s on n GPUs at candidates[c] (0: invalid), lazily
};

// The batch `job` trains at now.
inline BatchSize current_batch(const traces::JobSpec& job, const AdaptiveBatch& a) {
  return a.batch > 0 ? a.batch : job.global_batch;
}

// One step of `job` at the batch it trains at now (current_batch) on `placement`: Pollux's step of its effective
// batch (accumulation included) scaled to that batch (the same samples/s).
Result<Seconds> pollux_step_s(const traces::PolluxJobModel& model, const traces::JobSpec& job,
                              const AdaptiveBatch& adaptive, const std::vector<int>& placement);

// For a scheduler that adapts batches, when the run uses Pollux's measured steps and statistical efficiency and the
// job trains epochs: makes `f` elastic as Pollux's simulator makes its jobs (1 to min(the cluster's devices, the
// largest validated batch / the smallest local batch) GPUs; ncf: 1 GPU at batch 32768, as there) and fills its
// goodput by GPU count: for n GPUs packed on as few hosts as `cluster`'s largest holds, the best over the candidate
// batches (32 geometric steps over the validated batches, at least n x the smallest local batch) of the measured
// throughput x the statistical efficiency at the job's current epoch of progress, and that batch. `samples`: trained
// so far. Otherwise leaves `f` as it is. Errors name the job.
Status fill_goodput_facts(const ClusterSimOptions& options, const traces::JobSpec& job,
                          const scheduler::ClusterFacts& cluster, double samples, AdaptiveBatch& state,
                          scheduler::JobFacts& f);

// Moves the job to global batch `batch` at `samples` trained: the progress left is trained at the new batch's
// statistical efficiency (`total_samples` becomes `samples` + what that takes). Nothing when the batch is unchanged.
Status switch_batch(const ClusterSimOptions& options, const traces::JobSpec& job, BatchSize batch, double samples,
                    AdaptiveBatch& state, double& total_samples);

// summary.json's job_model block: which model the run used and its source.
nlohmann::ordered_json job_model_json(const ClusterSimOptions& options);

// The simulator's calls, on its job (cluster_sim.h's Job: spec, outcome, adaptive, total_samples): its restarts and
// fill_goodput_facts into `f`; switch_batch to `batch`.
// `samples`: what the job has trained by now.
template <class Job>
Status adapt_job_facts(const ClusterSimOptions& options, const scheduler::ClusterFacts& cluster, Job& job,
                       double samples, scheduler::JobFacts& f) {
  f.restarts = static_cast<int>(job.outcome.restarts);
  return fill_goodput_facts(options, *job.spec, cluster, samples, job.adaptive, f);
}
template <class Job>
Status adopt_batch(const ClusterSimOptions& options, BatchSize batch, Job& job, double samples) {
  return switch_batch(options, *job.spec, batch, samples, job.adaptive, job.total_samples);
}

}  // namespace omnilearn::sim
