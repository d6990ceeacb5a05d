// WorkerProcess: one child process of the launcher, started so that it is inside its resource group before it
// runs any of its own code: fork, the child blocks on a "go" pipe, the parent attaches it to its group, then
// releases it and the child execs the worker program. No shell is involved: argv goes to execve as is.
// The child gets its own process group (a terminal's Ctrl-C reaches only the launcher) and dies with the launcher
// (PR_SET_PDEATHSIG). Not thread-safe.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"

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

  pid_t pid() const { return pid_; }
  int report_fd() const { return report_fd_; }   // read end; -1 once closed
  void close_report();
  // Sends `text` on the control pipe; false if the child is gone.
  bool send(const std::string& text);
  // Non-blocking waitpid: true once the child has exited (then status() is waitpid's status).
  bool poll_exit();
  bool exited() const { return exited_; }
  int status() const { return status_; }
  void signal(int signo) const;
  // Blocking wait (after SIGKILL).
  void wait();
  // Reads what is available on the report pipe into `buffer`; returns false at end of file or error.
  bool read_available(std::string& buffer);

 private:
  pid_t pid_ = -1;
  int report_fd_ = -1;
  int control_fd_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace omnilearn::emulator::detail
