// The launcher's plumbing (launcher.cpp): the SIGINT/SIGTERM self-pipe, a free loopback port, the run manifest and the
// several-hosts checks. Internal to the emulator library.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/run/manifest.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator::detail {

// Installs SIGINT/SIGTERM handlers writing the signal number to a self-pipe and ignores SIGPIPE while it lives;
// restores everything on destruction. One at a time (the handler's pipe is process-wide state).
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  int read_fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_int_ {}, old_term_ {}, old_pipe_ {};
};

// A TCP port on 127.0.0.1 that was free a moment ago (for rank 0's TCPStore).
Result<int> free_loopback_port();
// manifest.json of a testbed run: the resolved scenario, argv, seed, run id and cgroup folder, shares, the worker
// program, what the quota holds as applied (`throttle`: compute when the communication threads run outside it),
// nodes and overrides, extra fields, and the wall clock.
run::Manifest testbed_manifest(const scenarios::Scenario& scenario, const LaunchOptions& options, const std::string& run_id,
                               const std::vector<double>& shares, const std::string& worker_exe, bool comm_unthrottled);
// The state letter of process `pid` in /proc/<pid>/stat ('R', 'S', 'D', 'T', 't', 'Z', ...), or '?' if unknown.
char process_state(pid_t pid);
// Why a process in `state` makes no progress, for the stall message ("" when the state says nothing).
std::string describe_state(char state);

// Checks the several-hosts options against the scenario (single host: nothing to check).
Status validate_nodes(const NodeOptions& nodes, std::size_t workers, bool asp);
// Checks that this node's workers' shares fit this host (several hosts: each host carries only its share).
Status validate_local_cpus(const std::vector<double>& local_shares, int host_cpus);

}  // namespace omnilearn::emulator::detail
