// The launcher's plumbing (launcher.cpp, pipeline/pipeline_launcher.cpp): the SIGINT/SIGTERM self-pipe, how a stopped
// run ends, a free loopback port, the run manifest and the several-hosts checks. Internal to the emulator library.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstring>
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

// Sets the outcome, exit code and message of `result` (a LaunchResult, a PipelineTestbedResult) for a run stopped by
// `stop_signal` (0: none), else for one that failed with `failure` (kStalled when `stalled`); `processes` names the
// launcher's processes in the message ("workers", "stages"). Returns false, leaving `result` alone, for a run that was
// neither stopped nor failed.
template <typename RunResult>
bool set_stopped_outcome(RunResult& result, int stop_signal, const Status& failure, bool stalled,
                         const std::string& processes) {
  if (stop_signal != 0) {
    result.outcome = stop_signal == SIGINT ? RunOutcome::kInterrupted : RunOutcome::kTerminated;
    result.exit_code = 128 + stop_signal;
    result.message = std::string("stopped by ").append(strsignal(stop_signal)) + "; " + processes +
                     " stopped, cgroups removed";
    return true;
  }
  if (!failure.is_ok()) {
    result.outcome = stalled ? RunOutcome::kStalled : RunOutcome::kWorkerFailed;
    result.exit_code = 1;
    result.message = failure.message() + "; the other " + processes + " were stopped and the cgroups removed";
    return true;
  }
  return false;
}

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
