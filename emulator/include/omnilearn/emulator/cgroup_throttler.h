// CgroupThrottler: the real throttler, one cgroup per worker through libcgroup: <controller mount>/omnilearn-<run
// id>/w<k> in the cpu (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max), cpuacct (v1, for measured usage) and
// freezer controllers, plus w<k>-comm (no quota) for the worker's communication threads when the quota holds
// compute only on cgroup v1. Not thread-safe, except set_frozen(), which writes one file and keeps no state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/resource_throttler.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

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
  std::string cpuset;  // "" (no pinning) or a CPU list such as "0-1", applied to every worker
  // What the quota holds (emulator.throttle). kCompute also makes an unlimited group w<k>-comm per worker for its
  // communication threads (thread_files); cgroup v1 only: v1 moves single threads through `tasks`, while on
  // v2 the quota holds the whole process whatever is asked.
  scenarios::QuotaScope throttle = scenarios::QuotaScope::kProcess;
};

class CgroupThrottler final : public FreezableThrottler {
 public:
  ~CgroupThrottler() override;
  CgroupThrottler(const CgroupThrottler&) = delete;
  CgroupThrottler& operator=(const CgroupThrottler&) = delete;

  Status attach(WorkerId worker, pid_t pid) override;
  Status apply(WorkerId worker, double fraction) override;
  Status remove() override;
  // The freezer file of `worker`'s group (v1 freezer.state, v2 cgroup.freeze).
  Status set_frozen(WorkerId worker, bool frozen) override;

  // The tasks files of w<k>-comm and w<k> in every controller when the quota holds compute only (cgroup v1);
  // empty otherwise.
  ThreadFiles thread_files(WorkerId worker) const;
  // CPU time (seconds) `worker`'s group has used so far, from cpuacct.usage (v1, with its w<k>-comm group's when the
  // quota holds compute only) or cpu.stat (v2).
  Result<double> cpu_usage_s(WorkerId worker) const override;

 private:
  friend Result<std::unique_ptr<CgroupThrottler>> make_cgroup_throttler(const CgroupThrottlerOptions& options);
  explicit CgroupThrottler(const CgroupThrottlerOptions& options);

  std::string group(WorkerId worker) const;
  std::string comm_group(WorkerId worker) const;
  std::string path(WorkerId worker, const std::string& controller) const;
  std::vector<std::string> tasks_files(WorkerId worker, bool comm) const;
  Status find_mounts();
  Status create_one(const std::string& name);
  Status create_groups();
  Status set_quota(WorkerId worker, CpuQuota quota);
  void kill_tasks(WorkerId worker);

  std::string folder_;
  std::vector<double> nominal_;
  double period_s_;
  std::string cpuset_;
  bool split_comm_ = false;
  bool v2_ = false;
  std::vector<std::string> controllers_;
  std::vector<std::string> mounts_;  // parallel to controllers_
  bool removed_ = false;
};

// Creates the groups at full nominal share. Errors name the controller and say whether it is a permission problem
// or a controller that is not mounted.
Result<std::unique_ptr<CgroupThrottler>> make_cgroup_throttler(const CgroupThrottlerOptions& options);

// Whether this process can create CPU cgroups here; the error says why not (for tests that skip).
Status check_cgroup_access(const std::string& root = "/sys/fs/cgroup");

// True when `root` is a unified (v2) cgroup hierarchy (statfs magic CGROUP2_SUPER_MAGIC).
bool is_cgroup_v2(const std::string& root = "/sys/fs/cgroup");

}  // namespace omnilearn::emulator
