#include "worker_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
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
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
}

Status WorkerProcess::start(std::vector<std::string> argv, const std::vector<std::string>& env,
                            const std::function<Status(pid_t)>& attach) {
  int report[2];
  int control[2];
  int go[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(control, O_CLOEXEC) != 0) {
    ::close(report[0]), ::close(report[1]);
    return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(go, O_CLOEXEC) != 0) {
    ::close(report[0]), ::close(report[1]), ::close(control[0]), ::close(control[1]);
    return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  }
  for (std::string& a : argv) {
    if (a == "{out_fd}") a = std::to_string(report[1]);
    if (a == "{in_fd}") a = std::to_string(control[0]);
  }
  // Everything the child needs is built before fork: after fork only async-signal-safe calls are allowed.
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_copy = env;
  std::vector<char*> cenv;
  for (std::string& e : env_copy) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {report[0], report[1], control[0], control[1], go[0], go[1]}) ::close(fd);
    return Status::io_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::fcntl(report[1], F_SETFD, 0);
    ::fcntl(control[0], F_SETFD, 0);
    char byte = 0;
    ssize_t n = 0;
    do {
      n = ::read(go[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1 || byte != 'g') ::_exit(126);  // the launcher could not attach us: never run unthrottled
    ::execve(cargv[0], cargv.data(), cenv.data());
    const char msg[] = "omnilearn emulate: cannot execute the worker program\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  pid_ = pid;
  ::setpgid(pid, pid);  // also from the parent, so signal() works whichever runs first
  ::close(report[1]);
  ::close(control[0]);
  ::close(go[0]);
  report_fd_ = report[0];
  control_fd_ = control[1];
  Status attached = attach(pid);
  if (!attached.is_ok()) {
    ::close(go[1]);  // the child reads EOF and exits 126
    ::kill(pid, SIGKILL);
    wait();
    return attached;
  }
  const char byte = 'g';
  const bool released = ::write(go[1], &byte, 1) == 1;
  ::close(go[1]);
  if (!released) return Status::io_error("cannot release worker process " + std::to_string(pid));
  ::fcntl(report_fd_, F_SETFL, ::fcntl(report_fd_, F_GETFL) | O_NONBLOCK);
  return Status::ok();
}

void WorkerProcess::close_report() { close_fd(report_fd_); }

bool WorkerProcess::send(const std::string& text) {
  if (control_fd_ < 0) return false;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(control_fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close_fd(control_fd_);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool WorkerProcess::poll_exit() {
  if (exited_ || pid_ <= 0) return exited_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    status_ = status;
  }
  return exited_;
}

void WorkerProcess::signal(int signo) const {
  if (pid_ > 0 && !exited_) ::kill(-pid_, signo);  // the worker's whole process group
}

void WorkerProcess::wait() {
  if (pid_ <= 0 || exited_) return;
  int status = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  exited_ = true;
  status_ = status;
}

bool WorkerProcess::read_available(std::string& buffer) {
  if (report_fd_ < 0) return false;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(report_fd_, buf, sizeof buf);
    if (n > 0) {
      buffer.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    close_report();
    return false;
  }
}

}  // namespace omnilearn::emulator::detail
