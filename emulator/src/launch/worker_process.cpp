#include "worker_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace omnilearn::emulator::detail {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

WorkerProcess::~WorkerProcess() {
  close_report();
  close_fd(control_fd_);
  process_.reset();  // SIGKILLs and reaps a child that still runs
}

Status WorkerProcess::start(std::vector<std::string> argv, const std::vector<std::string>& env,
                            const std::function<Status(pid_t)>& attach) {
  int report[2];
  int control[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(control, O_CLOEXEC) != 0) {
    ::close(report[0]), ::close(report[1]);
    return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  }
  for (std::string& a : argv) {
    if (a == "{out_fd}") a = std::to_string(report[1]);
    if (a == "{in_fd}") a = std::to_string(control[0]);
  }
  SpawnOptions options;
  options.env = env;
  options.keep_fds = {report[1], control[0]};
  options.before_exec = attach;  // never run unthrottled: the child execs only once it is in its group
  auto child = Subprocess::start(argv, options);
  ::close(report[1]);
  ::close(control[0]);
  if (!child) {
    ::close(report[0]), ::close(control[1]);
    return child.status();
  }
  process_.emplace(std::move(child).value());
  report_fd_ = report[0];
  control_fd_ = control[1];
  ::fcntl(report_fd_, F_SETFL, ::fcntl(report_fd_, F_GETFL) | O_NONBLOCK);
  return Status::ok();
}

void WorkerProcess::close_report() { close_fd(report_fd_); }

bool WorkerProcess::send(const std::string& text) { return write_all(control_fd_, text); }

bool WorkerProcess::read_available(std::string& buffer) { return omnilearn::read_available(report_fd_, buffer); }

}  // namespace omnilearn::emulator::detail
