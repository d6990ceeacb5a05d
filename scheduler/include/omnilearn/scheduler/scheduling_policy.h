// SchedulingPolicy: the seam between a multi-job driver and a cluster-scheduling rule. Once per round the driver
// hands a policy the RoundFacts and receives an Allocation: the device slots of every job for the round, and what
// changed for it (started, preempted, resized, ...) with the checkpoint/restore seconds that change costs. Policies
// read no clock and do no I/O; one instance is used from one thread at a time (docs/scheduler.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scheduler/round_facts.h"

namespace omnilearn::scheduler {

// Where a job's devices of one kind go: on as few hosts as possible, or over as many as possible.
enum class Placement { kPack, kSpread };

// Settings shared by the policies; each reads only what it uses.
struct SchedulerOptions {
  Seconds round_s = 60.0;      // round length: the caller's period between decide() calls
  Seconds checkpoint_s = 0.0;  // what a job that loses or changes its devices spends saving its state
  Seconds restore_s = 0.0;     // what a job that resumes or changes its devices spends loading it
  // Charge restore_s at a job's first start too, as Pollux's simulator charges its restart penalty at every start
  // (off: a first start has nothing to load and costs 0).
  bool restore_at_first_start = false;
  Placement placement = Placement::kPack;
  // las, balanced-mix: the attained-service thresholds (worker-seconds) between the queues, increasing. Queue q
  // holds the jobs with thresholds[q-1] <= attained service < thresholds[q].
  std::vector<double> las_thresholds = {3600.0, 36000.0};
  // las, balanced-mix: a job that has waited at least this long goes to the first queue (starvation relief).
  Seconds las_starvation_s = 3600.0;
  // Every policy: after it decides, pack waiting one-worker jobs onto devices held by one-worker jobs where both
  // gain (scheduler/packing_policy.h).
  bool packing = false;
};

// Returns an error naming the field when an option is out of range.
Status validate_scheduler_options(const SchedulerOptions& options);

enum class JobChange {
  kWaiting,    // held nothing, gets nothing
  kStarted,    // held nothing, gets devices (a restore if it ran before, or with restore_at_first_start)
  kKept,       // gets exactly the devices it held
  kMoved,      // as many devices as before, not the same ones (checkpoint and restore)
  kResized,    // a different number of devices (checkpoint and restore)
  kPreempted,  // held devices, gets none (checkpoint)
};
std::string_view job_change_name(JobChange change);

struct JobAllocation {
  std::string job_id;
  std::vector<DeviceSlot> slots;  // sorted; empty when the job does not run this round
  JobChange change = JobChange::kWaiting;
  // Seconds of the round the job spends on the change: checkpoint_s when preempted, restore_s when it resumes,
  // both when moved or resized, 0 for a kept job or a waiting one, and for a first start 0 (restore_s with
  // SchedulerOptions::restore_at_first_start).
  Seconds restart_s = 0.0;
  // The global batch the job trains at from this round, chosen by a policy that adapts batches (adapts_batches());
  // 0: the job keeps its batch.
  std::int64_t global_batch = 0;
};

struct Allocation {
  std::vector<JobAllocation> jobs;  // one per RoundFacts::jobs entry, same order
};

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  // The registry name of this policy ("fifo", "las", ...).
  virtual std::string_view name() const = 0;
  // The allocation for the round `facts` describes. An error (naming the job and field) for invalid facts or a
  // job this policy cannot serve. A returned allocation never gives a slot to two jobs, never exceeds a host's
  // slots, gives each job 0 or [min_workers, max_workers] devices and only of kinds it can run on.
  virtual Result<Allocation> decide(const RoundFacts& facts) = 0;
  // Whether the policy itself gives one device to two jobs (packing): then the registry adds no packing pass, and
  // its allocations may name a slot for exactly two jobs.
  virtual bool packs_devices() const { return false; }
  // Whether the policy reads JobFacts::goodput_by_workers and may set JobAllocation::global_batch: then the driver
  // fills the first where it can and trains each job at the second where set.
  virtual bool adapts_batches() const { return false; }
};

// Sets `a.change` and `a.restart_s` from what `job` held (job.current) and what it gets (a.slots, sorted).
void set_change(const JobFacts& job, const SchedulerOptions& options, JobAllocation& a);

// What each job's change from `facts` to `slots_by_job` (one sorted slot list per job) is and costs. Checks the
// invariants above (a violation is a bug in the policy: OMNI_CHECK). For policies' use.
Allocation make_allocation(const RoundFacts& facts, const SchedulerOptions& options,
                           std::vector<std::vector<DeviceSlot>> slots_by_job);

}  // namespace omnilearn::scheduler
