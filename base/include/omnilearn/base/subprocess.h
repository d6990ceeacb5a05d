// Subprocess: the one way OmniLearn starts another program: fork, then execve with argv as given (no shell), with
// the child's environment, working folder, standard streams and inherited descriptors chosen in SpawnOptions. By
// default the child has its own process group (a terminal's Ctrl-C reaches only this process, which stops its
// children itself) and dies with this process (PR_SET_PDEATHSIG), so a parent stopped by SIGKILL or a crash leaves
// no child behind (the kernel sends the death signal when the thread that started the child ends: start children from
// a thread that outlives them). A Subprocess still running when it is destroyed is SIGKILLed and reaped. Not
// thread-safe.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn {

struct SpawnOptions {
  // The child's environment ("NAME=value" each); nothing: this process's.
  std::optional<std::vector<std::string>> env;
  // argv[0] without a '/' is looked up in this process's PATH (as execvp does).
  bool search_path = false;
  std::string working_dir;  // "": this process's
  // Where stdout and stderr go: "" keeps this process's; a path is created or truncated (the same path for both:
  // one file, as `>log 2>&1`). pipe_output sends both into a pipe instead (read_available, read_all).
  std::string stdout_file;
  std::string stderr_file;
  bool pipe_output = false;
  bool pipe_input = false;    // stdin from a pipe (write_input, close_input); otherwise this process's
  std::vector<int> keep_fds;  // descriptors of this process the child keeps open (the project opens all with O_CLOEXEC)
  bool own_process_group = true;
  int parent_death_signal = SIGKILL;  // sent to the child when this process ends; 0: none (the child may outlive it)
  // Called with the child's pid while the child waits before exec; the child runs nothing of the program before
  // this returns ok. An error kills the child and is returned by start() (the testbed attaches a worker to its
  // cgroup here, so that no worker code runs unthrottled).
  std::function<Status(pid_t)> before_exec;
  // Runs in the child just before exec: async-signal-safe calls only (setns, ...). False: the child exits with 126.
  std::function<bool()> in_child;
};

class Subprocess {
 public:
  // Starts argv[0] with `argv`. An error when it could not start (a pipe or file, fork, before_exec, a program that
  // cannot be executed: the error names it), and then nothing runs.
  static Result<Subprocess> start(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  // Starts `argv` with its stdin from a pipe that gets `input` and then closes (a child that exits without reading
  // it does not kill this process with SIGPIPE), and waits; returns its wait status (waitpid's).
  static Result<int> run(const std::vector<std::string>& argv, SpawnOptions options = {},
                         const std::string& input = "");

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // Gives up the child: this object no longer waits for it or kills it; the caller reaps the returned pid.
  pid_t release();

  int output_fd() const { return output_fd_; }  // read end of pipe_output; -1 once closed
  // Reads what is available on the output pipe (non-blocking) into `buffer`; false at end of file or error (then
  // the pipe is closed).
  bool read_available(std::string& buffer);
  // Reads the output pipe to its end (blocking).
  std::string read_all();
  void close_output();

  // Writes all of `text` to the input pipe; false (and the pipe is closed) when the child no longer reads it.
  bool write_input(const std::string& text);
  void close_input();

  // Non-blocking waitpid: true once the child has exited (then status() is waitpid's status).
  bool poll_exit();
  bool exited() const { return exited_; }
  int status() const { return status_; }
  // Blocking waitpid.
  void wait();
  // Sends `signo` to the child's process group when it has its own, else to the child.
  void signal(int signo) const;

 private:
  Subprocess() = default;
  void reset();

  pid_t pid_ = -1;
  bool own_group_ = false;
  bool exited_ = false;
  int status_ = 0;
  int input_fd_ = -1;
  int output_fd_ = -1;
};

// Reads what is available on descriptor `fd` (non-blocking) into `buffer`; false at end of file or on an error, and
// then `fd` is closed and set to -1.
bool read_available(int& fd, std::string& buffer);
// Writes all of `text` to `fd`; false when the reader is gone (or on an error), and then `fd` is closed and set to -1.
bool write_all(int& fd, const std::string& text);

// "exited with code 3", "was killed by signal 9 (Killed)": a wait status in words.
std::string describe_exit(int status);

}  // namespace omnilearn
