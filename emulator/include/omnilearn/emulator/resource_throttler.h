// ResourceThrottler: the seam through which the testbed limits what each worker process may use (DESIGN.md §2):
// what every throttler does (attach a worker's process, set its share, remove the groups). One resource group per
// worker; the group exists from the factory call until remove() (or destruction). Not thread-safe: one launcher
// thread drives a throttler, except where an implementation says otherwise.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::emulator {

class ResourceThrottler {
 public:
  virtual ~ResourceThrottler() = default;
  // Moves process `pid` into `worker`'s group. Call before the process does any work.
  virtual Status attach(WorkerId worker, pid_t pid) = 0;
  // Sets `worker` to `fraction` (in [0, 1]) of its nominal share; 0 means down (the smallest share the knob has).
  virtual Status apply(WorkerId worker, double fraction) = 0;
  // Kills every task still in the groups and deletes them. Idempotent; also done by the destructor.
  virtual Status remove() = 0;
  // CPU time (seconds) `worker`'s group has used so far, where the throttler accounts it (cgroups); an error
  // otherwise, and then the caller reads the worker's process instead.
  virtual Result<double> cpu_usage_s(WorkerId worker) const {
    (void)worker;
    return Status::not_found("this throttler does not account CPU time");
  }
};

// A throttler that can also stop every task of a worker's group at once and resume it (the cgroup freezer): what
// a DutyCycleThrottler drives. set_frozen is called from the duty cycle's own thread, alongside the launcher's
// calls: implementations must allow that.
class FreezableThrottler : public ResourceThrottler {
 public:
  virtual Status set_frozen(WorkerId worker, bool frozen) = 0;
};

// Where a worker puts its communication threads so that its limit holds its compute threads only (emulator.throttle:
// compute): it writes the id of each such thread into every file of `comm`, and a thread's id into every file of
// `compute` to put it back under the limit. Both empty: the limit holds the whole process.
struct ThreadFiles {
  std::vector<std::string> comm;
  std::vector<std::string> compute;
};

// What a launcher gets from a throttler factory: the throttler of its workers (local ids 0..n-1) and, per worker,
// its thread files (empty, or all empty, when the limit holds whole processes).
struct WorkerGroups {
  std::unique_ptr<ResourceThrottler> throttler;
  std::vector<ThreadFiles> thread_files;
};

}  // namespace omnilearn::emulator
