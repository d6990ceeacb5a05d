// MpsDaemon: a private CUDA MPS control daemon for one testbed run (DESIGN.md §2: GPU shares through MPS).
// It runs `nvidia-cuda-mps-control -d` with its own CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY, so it never
// touches another user's daemon, and stops it (writing "quit\n" to the control program's stdin through a pipe; no
// shell) in stop(), in the destructor, and therefore on every error and signal path of the launcher, which unwinds
// on SIGINT/SIGTERM. A SIGKILL of the launcher leaves the daemon running: `echo quit | CUDA_MPS_PIPE_DIRECTORY=...
// nvidia-cuda-mps-control` ends it. Limits: a client's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is fixed when it connects,
// so dynamic availability needs another knob (freezer duty cycle) or a restart. Not thread-safe. Torch-free.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::emulator {

struct MpsDaemonOptions {
  std::string base_dir;               // pipe/ and log/ are created under it (the run folder, or /tmp/omnilearn-mps-<run>)
  std::string control_program;        // "" = nvidia-cuda-mps-control from PATH, else /usr/bin, /usr/local/cuda/bin
  std::vector<std::string> extra_env; // KEY=VALUE added to the daemon's environment (e.g. CUDA_VISIBLE_DEVICES=0)
  double start_timeout_s = 15.0;      // wait this long for the daemon to come up
  double stop_timeout_s = 15.0;       // and this long for it to exit after "quit" before SIGKILL
};

class MpsDaemon {
 public:
  // Starts the daemon and waits until it is up. Errors name the program and what went wrong (not installed, no
  // GPU driver, failed to start: the daemon's log folder is named).
  static Result<std::unique_ptr<MpsDaemon>> start(const MpsDaemonOptions& options);
  ~MpsDaemon();
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // Sends "quit" and waits until no process of this daemon (control daemon or MPS server) is left; SIGKILLs what
  // remains after stop_timeout_s. Idempotent.
  Status stop();
  // Processes of this daemon still alive (found through /proc by their CUDA_MPS_PIPE_DIRECTORY).
  std::vector<pid_t> processes() const;
  bool running() const { return !processes().empty(); }

  // The environment additions for one client: the daemon's folders, its active-thread percentage (1..100) and,
  // if given, a pinned device memory limit such as "0=8G".
  std::vector<std::string> client_env(int active_thread_percentage,
                                      const std::optional<std::string>& pinned_mem_limit = std::nullopt) const;
  const std::string& pipe_dir() const { return pipe_dir_; }
  const std::string& log_dir() const { return log_dir_; }

 private:
  MpsDaemon() = default;
  std::vector<std::string> daemon_env() const;

  std::string program_;
  std::string pipe_dir_;
  std::string log_dir_;
  std::vector<std::string> extra_env_;
  double stop_timeout_s_ = 15.0;
  bool stopped_ = false;
};

// Finds `name` in PATH, /usr/bin or /usr/local/cuda/bin; "" if absent.
std::string find_program(const std::string& name);

}  // namespace omnilearn::emulator
