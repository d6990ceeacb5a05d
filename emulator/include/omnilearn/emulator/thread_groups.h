// Moving single threads between cgroups (v1 `tasks` files): how a worker runs its communication threads outside
// its CPU quota (emulator.throttle: compute). Torch-free; plain functions of /proc and the cgroup files.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::emulator {

// The ids of this process's threads (/proc/self/task), sorted.
std::vector<pid_t> own_thread_ids();

// Moves the threads started since `before` (own_thread_ids() then) into the groups whose `tasks` files are
// `files` (cgroup v1 moves one thread per write): the threads a rendezvous starts run outside the quota, while
// threads the calling thread starts later (OpenMP's) stay in it. An error names the file.
Status move_new_threads(const std::vector<pid_t>& before, const std::vector<std::string>& files);

// Moves thread `tid` of this process into the groups whose `tasks` files are `files`.
Status move_thread(pid_t tid, const std::vector<std::string>& files);

// The calling thread's id.
pid_t current_thread_id();

}  // namespace omnilearn::emulator
