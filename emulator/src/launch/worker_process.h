// WorkerProcess: one child process of the launcher (a Subprocess, base/subprocess.h), started so that it is inside
// its resource group before it runs any of its own code: the child waits until the launcher has attached it, then
// execs the worker program. It reports on a pipe (child -> launcher) and reads commands on another (launcher ->
// child). The child gets its own process group (a terminal's Ctrl-C reaches only the launcher) and dies with the
// launcher (PR_SET_PDEATHSIG). Not thread-safe.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/subprocess.h"

namespace omnilearn::emulator::detail {

class WorkerProcess {
 public:
  WorkerProcess() = default;
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts `argv[0]` with `argv` and `env`; "{out_fd}" and "{in_fd}" in argv are replaced by the child's ends of
  // the report pipe (child -> launcher) and the control pipe (launcher -> child). `attach` is called with the
  // child's pid while it waits; if it fails the child is killed and the error returned.
  Status start(std::vector<std::string> argv, const std::vector<std::string>& env,
               const std::function<Status(pid_t)>& attach);

  pid_t pid() const { return process_ ? process_->pid() : -1; }
  int report_fd() const { return report_fd_; }  // read end; -1 once closed
  void close_report();
  // Sends `text` on the control pipe; false if the child is gone.
  bool send(const std::string& text);
  // Non-blocking waitpid: true once the child has exited (then status() is waitpid's status).
  bool poll_exit() { return process_ && process_->poll_exit(); }
  bool exited() const { return process_ && process_->exited(); }
  int status() const { return process_ ? process_->status() : 0; }
  // To the worker's whole process group.
  void signal(int signo) const {
    if (process_) process_->signal(signo);
  }
  // Blocking wait (after SIGKILL).
  void wait() {
    if (process_) process_->wait();
  }
  // Reads what is available on the report pipe into `buffer`; returns false at end of file or error.
  bool read_available(std::string& buffer);

 private:
  std::optional<Subprocess> process_;
  int report_fd_ = -1;
  int control_fd_ = -1;
};

}  // namespace omnilearn::emulator::detail
