// Stale cgroups: the groups that a launcher killed with SIGKILL (or crashed) could not remove. Their folder
// names say who made them (names.h); a folder whose launcher is gone (no such pid, or the pid now belongs to a
// process that started at another time) is thawed, emptied (SIGKILL to what is left in it) and removed. A live
// launcher's folders, and folders whose names do not parse (older runs, other programs), are never touched.
// Not thread-safe against a concurrent clean-up of the same folders in this process (between processes: one
// of them removes a folder, the other finds it gone, which is not an error).
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/names.h"

namespace omnilearn::emulator {

// True while the launcher `owner` runs: a process with its pid and its start time exists. A pid that is alive
// but whose start time is unknown counts as alive (never remove what might be in use).
bool launcher_alive(const LauncherId& owner);

// What remove_stale_cgroups did: the folders it removed (full paths) and, when some could not be removed, why.
struct CgroupCleanup {
  std::vector<std::string> removed;
  Status status;  // ok, or the first failure (the rest were still tried)
};

// Removes the stale run folders directly under each of `roots` (default: the mount point of every cgroup
// hierarchy in /proc/self/mounts). Tasks left in them are killed first (thawed on cgroup v1's freezer so that
// SIGKILL lands; up to 2 s to empty).
CgroupCleanup remove_stale_cgroups(const std::vector<std::string>& roots = {});

}  // namespace omnilearn::emulator
