#include "omnilearn/scheduler/scheduling_policy.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "omnilearn/base/check.h"
#include "omnilearn/base/format.h"

namespace omnilearn::scheduler {
namespace {

Status check_seconds(Seconds v, const std::string& field, bool positive) {
  if (!std::isfinite(v) || v < 0.0 || (positive && v == 0.0)) {
    return Status::invalid_argument("scheduler option " + field + " must be a finite number " +
                                    (positive ? "> 0" : ">= 0") + ", got " + format_g(v));
  }
  return Status::ok();
}

}  // namespace

Status validate_scheduler_options(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(check_seconds(options.round_s, "round_s", /*positive=*/true));
  OMNI_RETURN_IF_ERROR(check_seconds(options.checkpoint_s, "checkpoint_s", /*positive=*/false));
  OMNI_RETURN_IF_ERROR(check_seconds(options.restore_s, "restore_s", /*positive=*/false));
  OMNI_RETURN_IF_ERROR(check_seconds(options.las_starvation_s, "las_starvation_s", /*positive=*/false));
  for (std::size_t q = 0; q < options.las_thresholds.size(); ++q) {
    const double t = options.las_thresholds[q];
    if (!std::isfinite(t) || t <= 0.0 || (q > 0 && t <= options.las_thresholds[q - 1])) {
      return Status::invalid_argument("scheduler option las_thresholds[" + std::to_string(q) +
                                      "] must be finite, > 0 and greater than the one before, got " + format_g(t));
    }
  }
  return Status::ok();
}

std::string_view job_change_name(JobChange change) {
  switch (change) {
    case JobChange::kWaiting:
      return "waiting";
    case JobChange::kStarted:
      return "started";
    case JobChange::kKept:
      return "kept";
    case JobChange::kMoved:
      return "moved";
    case JobChange::kResized:
      return "resized";
    case JobChange::kPreempted:
      return "preempted";
  }
  return "?";
}

void set_change(const JobFacts& job, const SchedulerOptions& options, JobAllocation& a) {
  const int n = static_cast<int>(a.slots.size());
  std::vector<DeviceSlot> held = job.current;
  std::sort(held.begin(), held.end());
  a.restart_s = 0.0;
  if (held.empty()) {
    a.change = n == 0 ? JobChange::kWaiting : JobChange::kStarted;
    const bool resumes = job.attained_service() > 0.0;
    a.restart_s = n > 0 && (resumes || options.restore_at_first_start) ? options.restore_s : 0.0;
  } else if (n == 0) {
    a.change = JobChange::kPreempted;
    a.restart_s = options.checkpoint_s;
  } else if (a.slots == held) {
    a.change = JobChange::kKept;
  } else {
    a.change = n == static_cast<int>(held.size()) ? JobChange::kMoved : JobChange::kResized;
    a.restart_s = options.checkpoint_s + options.restore_s;
  }
}

Allocation make_allocation(const RoundFacts& facts, const SchedulerOptions& options,
                           std::vector<std::vector<DeviceSlot>> slots_by_job) {
  OMNI_CHECK(slots_by_job.size() == facts.jobs.size(), "an allocation needs one slot list per job");
  std::vector<DeviceSlot> used;  // every job's slots, each at most once (checked at the end)
  Allocation out;
  out.jobs.reserve(facts.jobs.size());
  for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
    const JobFacts& job = facts.jobs[j];
    JobAllocation a;
    a.job_id = job.id;
    a.slots = std::move(slots_by_job[j]);
    std::sort(a.slots.begin(), a.slots.end());
    const int n = static_cast<int>(a.slots.size());
    OMNI_CHECK(n == 0 || (n >= job.min_workers && n <= job.max_workers),
               "job '" + job.id + "' got " + std::to_string(n) + " devices, outside [min_workers, max_workers]");
    for (const DeviceSlot& s : a.slots) {
      OMNI_CHECK(s.host < facts.cluster.hosts.size() && s.slot >= 0 && s.slot < facts.cluster.hosts[s.host].slots,
                 "job '" + job.id + "' got a slot the cluster does not have");
      auto it = job.throughput_per_worker.find(facts.cluster.hosts[s.host].kind);
      OMNI_CHECK(it != job.throughput_per_worker.end() && it->second > 0.0,
                 "job '" + job.id + "' got a device of a kind it cannot run on");
      used.push_back(s);
    }
    set_change(job, options, a);
    out.jobs.push_back(std::move(a));
  }
  std::sort(used.begin(), used.end());
  const auto twice = std::adjacent_find(used.begin(), used.end());
  if (twice != used.end()) {  // name the first job that holds it
    for (const JobAllocation& a : out.jobs) {
      OMNI_CHECK(!std::binary_search(a.slots.begin(), a.slots.end(), *twice),
                 "job '" + a.job_id + "' got a slot another job got");
    }
  }
  return out;
}

}  // namespace omnilearn::scheduler
