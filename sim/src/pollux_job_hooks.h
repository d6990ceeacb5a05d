// The jobs simulator's hooks into Pollux's measured job model (traces::PolluxJobModel; docs/jobs.md, "Pollux's
// measured job model"): a job's samples with statistical efficiency, and its step time on a placement. Stateless
// functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
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

// One step of `job`'s global batch on `placement`: Pollux's step of its effective batch (accumulation included)
// scaled to the global batch (the same samples/s).
Result<Seconds> pollux_step_s(const traces::PolluxJobModel& model, const traces::JobSpec& job,
                              const std::vector<int>& placement);

// summary.json's job_model block: which model the run used and its source.
nlohmann::ordered_json job_model_json(const ClusterSimOptions& options);

}  // namespace omnilearn::sim
