// The mechanics that the testbed's launchers (launcher.cpp, pipeline/pipeline_launcher.cpp) and `omnilearn
// calibrate` share around their worker processes: the environment they start them with, one wait on the signal
// self-pipe and the report pipes, line-wise reading of a report pipe, the exit check, and the stop (SIGTERM, then
// SIGKILL). Internal to the emulator library; not thread-safe (the workers are the caller's).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "worker_process.h"

namespace omnilearn::emulator::detail {

// This process's environment for a worker computing on `threads` threads: the inherited variables less
// OMP_WAIT_POLICY, OMP_NUM_THREADS, MKL_NUM_THREADS and those named in `drop`, then `extra` ("NAME=value"), then
// OMP_WAIT_POLICY=PASSIVE (idle threads sleep rather than spin on their quota) and OMP_NUM_THREADS and
// MKL_NUM_THREADS set to `threads`.
std::vector<std::string> worker_thread_env(int threads, const std::vector<std::string>& drop = {},
                                           const std::vector<std::string>& extra = {});

// Reads what is available on `worker`'s report pipe into `buffer` and calls `on_line` with each complete line (without
// its '\n'); an incomplete last line stays in `buffer`.
void drain_lines(WorkerProcess& worker, std::string& buffer, const std::function<void(std::string_view)>& on_line);

// Waits up to `timeout_ms` for a byte on `signal_fd` (a SignalGuard's) or output on the report pipe of any of
// `workers` still open. A signal number read is stored in `stop_signal`; `drain(k)` is called for each worker `k` whose
// pipe is ready (or closed). Returns an error when poll() fails other than by EINTR (then nothing is read).
Status poll_workers(int signal_fd, const std::vector<std::unique_ptr<WorkerProcess>>& workers, int timeout_ms,
                    int& stop_signal, const std::function<void(std::size_t)>& drain);

// An error naming `name` and its pid with how `worker` exited ("exited with status 2", describe_exit) when it exited
// other than with status 0; ok when it exited with 0 or has not exited (poll_exit() says which).
Status exit_failure(const WorkerProcess& worker, const std::string& name);

// Sends SIGTERM to every one of `workers`, waits up to `grace_s` for them to exit, sends SIGKILL to those that still
// run and reaps them all. Their report pipes stay open (what they wrote may still be read).
void stop_workers(const std::vector<std::unique_ptr<WorkerProcess>>& workers, double grace_s);

}  // namespace omnilearn::emulator::detail
