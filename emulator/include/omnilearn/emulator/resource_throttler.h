// ResourceThrottler: the seam through which the testbed limits what each worker process may use (DESIGN.md §2).
// One resource group per worker; the group exists from the factory call until remove() (or destruction). Not
// thread-safe: one launcher thread drives a throttler.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

class ResourceThrottler {
 public:
  virtual ~ResourceThrottler() = default;
  virtual std::string_view name() const = 0;
  // Moves process `pid` into `worker`'s group. Call before the process does any work.
  virtual Status attach(WorkerId worker, pid_t pid) = 0;
  // Sets `worker` to `fraction` (in [0, 1]) of its nominal share; 0 means down (the smallest share the knob has).
  virtual Status apply(WorkerId worker, double fraction) = 0;
  // Whether apply() takes effect on a running process (a CPU quota does; an MPS percentage does not).
  virtual bool can_change_live() const = 0;
  // Files into which `worker` writes the ids of its communication threads (one write per id) so that the limit
  // holds its compute threads only; empty when this throttler limits whole processes.
  virtual std::vector<std::string> comm_thread_files(WorkerId worker) const {
    (void)worker;
    return {};
  }
  // Files that put a thread back under `worker`'s limit (empty when comm_thread_files is).
  virtual std::vector<std::string> compute_thread_files(WorkerId worker) const {
    (void)worker;
    return {};
  }
  // Stops (frozen = true) or resumes every task of `worker`'s group at once (the cgroup freezer). The duty cycle
  // calls it from its own thread: implementations must allow that alongside the launcher's calls.
  virtual Status set_frozen(WorkerId worker, bool frozen) {
    (void)worker, (void)frozen;
    return Status::invalid_argument(std::string(name()) + " throttler cannot freeze workers");
  }
  // Kills every task still in the groups and deletes them. Idempotent; also done by the destructor.
  virtual Status remove() = 0;
  virtual std::size_t worker_count() const = 0;
};

// The CPU quota that gives `cores` (> 0, may exceed 1) of CPU: a `period_s` period (10 ms by default: smoother
// than the kernel's 100 ms, NOTES.md), lengthened when the quota would fall under the kernel's 1 ms minimum.
// cores <= 0 gives the floor: 1 ms per `period_s`.
struct CpuQuota {
  std::int64_t quota_us = 0;
  std::int64_t period_us = 0;
};
CpuQuota cpu_quota_for(double cores, double period_s);

struct CgroupThrottlerOptions {
  std::string run_id;                 // sanitised into the group folder omnilearn-<run id>
  std::vector<double> nominal_cores;  // per worker: the CPU share (cores, may be < 1) at fraction 1
  double period_s = 0.010;
  std::string cpuset;                 // "" (no pinning) or a CPU list such as "0-1", applied to every worker
  // What the quota holds (emulator.throttle). kCompute also makes an unlimited group w<k>-comm per worker for its
  // communication threads (comm_thread_files); cgroup v1 only: v1 moves single threads through `tasks`, while on
  // v2 the quota holds the whole process whatever is asked.
  scenarios::QuotaScope throttle = scenarios::QuotaScope::kProcess;
};

// The real throttler: one cgroup per worker, <controller mount>/omnilearn-<run id>/w<k> (and w<k>-comm), in the cpu (v1
// cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max), cpuacct (v1, for measured usage) and freezer controllers,
// through libcgroup. Creates the groups at full nominal share. Errors name the controller and say whether it
// is a permission problem or a controller that is not mounted.
Result<std::unique_ptr<ResourceThrottler>> make_cgroup_throttler(const CgroupThrottlerOptions& options);

// Whether this process can create CPU cgroups here; the error says why not (for tests that skip).
Status check_cgroup_access(const std::string& root = "/sys/fs/cgroup");

// True when `root` is a unified (v2) cgroup hierarchy (statfs magic CGROUP2_SUPER_MAGIC).
bool is_cgroup_v2(const std::string& root = "/sys/fs/cgroup");

// CPU time (seconds) the worker's group has used so far, from cpuacct.usage (v1) or cpu.stat (v2); an error
// when the throttler is not a cgroup throttler or the value cannot be read.
Result<double> cgroup_cpu_usage_s(const ResourceThrottler& throttler, WorkerId worker);

}  // namespace omnilearn::emulator
