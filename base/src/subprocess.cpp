#include "omnilearn/base/subprocess.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace omnilearn {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Descriptors that close themselves, so that every early return of start() leaves none open.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close_fd(fd); }
  int take() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

struct Pipe {
  Fd read, write;
};

Status make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  p.read.fd = fds[0];
  p.write.fd = fds[1];
  return Status::ok();
}

Status open_output(const std::string& path, Fd& fd) {
  fd.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd.fd < 0) return Status::io_error("cannot create " + path + ": " + std::strerror(errno));
  return Status::ok();
}

// `name` looked up in PATH as execvp does: a name with a '/' is taken as it is; "" when nothing matches.
std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// In the child: reports errno on the error pipe and exits (the parent reads it as the reason start() failed).
[[noreturn]] void child_fail(int error_fd, int code) {
  const int err = errno;
  (void)!::write(error_fd, &err, sizeof err);
  ::_exit(code);
}

// What the child does between fork and exec, all prepared before fork: only async-signal-safe calls here.
struct ChildPlan {
  const SpawnOptions* options = nullptr;
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int input_read = -1;    // becomes stdin (pipe_input)
  int output_write = -1;  // becomes stdout and stderr (pipe_output)
  int out_file = -1;      // becomes stdout (stdout_file)
  int err_file = -1;      // becomes stderr (stderr_file)
  int go_read = -1;       // the parent's go-ahead (before_exec)
  int error_write = -1;   // errno back to the parent if exec fails
  pid_t parent = 0;
};

[[noreturn]] void run_child(const ChildPlan& c) {
  const SpawnOptions& o = *c.options;
  const int efd = c.error_write;
  if (o.own_process_group) ::setpgid(0, 0);
  if (o.parent_death_signal != 0) {
    ::prctl(PR_SET_PDEATHSIG, o.parent_death_signal);
    if (::getppid() != c.parent) ::_exit(127);  // the parent is already gone
  }
  if (o.pipe_input && ::dup2(c.input_read, STDIN_FILENO) < 0) child_fail(efd, 127);
  if (o.pipe_output && (::dup2(c.output_write, STDOUT_FILENO) < 0 || ::dup2(c.output_write, STDERR_FILENO) < 0)) {
    child_fail(efd, 127);
  }
  if (c.out_file >= 0 && ::dup2(c.out_file, STDOUT_FILENO) < 0) child_fail(efd, 127);
  if (c.err_file >= 0 && ::dup2(c.err_file, STDERR_FILENO) < 0) child_fail(efd, 127);
  for (const int fd : o.keep_fds) ::fcntl(fd, F_SETFD, 0);
  if (!o.working_dir.empty() && ::chdir(o.working_dir.c_str()) != 0) child_fail(efd, 127);
  if (o.before_exec) {
    char byte = 0;
    ssize_t n = 0;
    do {
      n = ::read(c.go_read, &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1 || byte != 'g') ::_exit(126);  // the parent refused (before_exec failed): never run the program
  }
  if (o.in_child && !o.in_child()) child_fail(efd, 126);
  ::execve(c.program, c.argv, c.envp);
  child_fail(efd, 127);
}

// The error pipe closes on exec: end of file means the program runs; an errno means it could not start.
Status wait_for_exec(int error_read, const std::string& name) {
  int err = 0;
  ssize_t n = 0;
  do {
    n = ::read(error_read, &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof err)) return Status::ok();
  return Status::io_error("cannot start " + name + ": " + std::strerror(err));
}

}  // namespace

Result<Subprocess> Subprocess::start(const std::vector<std::string>& argv, const SpawnOptions& o) {
  if (argv.empty() || argv[0].empty()) return Status::invalid_argument("no program to start");
  const std::string program = o.search_path ? find_in_path(argv[0]) : argv[0];
  if (program.empty()) return Status::not_found("cannot start " + argv[0] + ": not found in PATH");

  // Everything the child needs is built before fork: after fork only async-signal-safe calls are allowed.
  std::vector<std::string> args = argv, env_store;
  std::vector<char*> cargv, cenv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  if (o.env) {
    env_store = *o.env;
    for (std::string& e : env_store) cenv.push_back(e.data());
    cenv.push_back(nullptr);
  }
  char* const* envp = o.env ? cenv.data() : environ;
  Fd out_file, err_file;
  if (!o.stdout_file.empty()) OMNI_RETURN_IF_ERROR(open_output(o.stdout_file, out_file));
  if (!o.stderr_file.empty() && o.stderr_file != o.stdout_file) {
    OMNI_RETURN_IF_ERROR(open_output(o.stderr_file, err_file));
  }
  const int child_err = o.stderr_file.empty() ? -1 : o.stderr_file == o.stdout_file ? out_file.fd : err_file.fd;
  Pipe input, output, go, error;
  if (o.pipe_input) OMNI_RETURN_IF_ERROR(make_pipe(input));
  if (o.pipe_output) OMNI_RETURN_IF_ERROR(make_pipe(output));
  if (o.before_exec) OMNI_RETURN_IF_ERROR(make_pipe(go));
  OMNI_RETURN_IF_ERROR(make_pipe(error));
  const pid_t parent = ::getpid();
  const ChildPlan plan{&o,          program.c_str(), cargv.data(), envp,           input.read.fd, output.write.fd,
                       out_file.fd, child_err,       go.read.fd,   error.write.fd, parent};
  const pid_t pid = ::fork();
  if (pid < 0) return Status::io_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) run_child(plan);
  Subprocess child;
  child.pid_ = pid;
  child.own_group_ = o.own_process_group;
  if (o.own_process_group) ::setpgid(pid, pid);  // also from here, so that signal() works whichever runs first
  close_fd(error.write.fd);
  close_fd(input.read.fd);
  close_fd(output.write.fd);
  close_fd(go.read.fd);
  child.input_fd_ = input.write.take();
  child.output_fd_ = output.read.take();
  if (o.before_exec) {
    Status ready = o.before_exec(pid);
    if (!ready.is_ok()) {
      close_fd(go.write.fd);  // the child reads end of file and exits 126
      ::kill(pid, SIGKILL);
      child.wait();
      return ready;
    }
    const char byte = 'g';
    if (::write(go.write.fd, &byte, 1) != 1) {
      ::kill(pid, SIGKILL);
      child.wait();
      return Status::io_error("cannot release process " + std::to_string(pid) + " (" + argv[0] + ")");
    }
    close_fd(go.write.fd);
  }
  if (Status started = wait_for_exec(error.read.fd, argv[0]); !started.is_ok()) {
    child.wait();
    return started;
  }
  if (child.output_fd_ >= 0) ::fcntl(child.output_fd_, F_SETFL, ::fcntl(child.output_fd_, F_GETFL) | O_NONBLOCK);
  return child;
}

Result<int> Subprocess::run(const std::vector<std::string>& argv, SpawnOptions options, const std::string& input) {
  options.pipe_input = true;
  auto child = start(argv, options);
  if (!child) return child.status();
  struct sigaction ign = {};
  struct sigaction old = {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGPIPE, &ign, &old);  // a child that exits early must not kill us
  (void)child->write_input(input);
  ::sigaction(SIGPIPE, &old, nullptr);
  child->close_input();
  child->wait();
  return child->status();
}

Subprocess::Subprocess(Subprocess&& other) noexcept { *this = std::move(other); }

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    reset();
    pid_ = other.pid_, own_group_ = other.own_group_, exited_ = other.exited_, status_ = other.status_;
    input_fd_ = other.input_fd_, output_fd_ = other.output_fd_;
    other.pid_ = -1, other.input_fd_ = -1, other.output_fd_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() { reset(); }

void Subprocess::reset() {
  close_fd(input_fd_);
  close_fd(output_fd_);
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  pid_ = -1;
}

pid_t Subprocess::release() {
  const pid_t pid = pid_;
  close_fd(input_fd_);
  close_fd(output_fd_);
  pid_ = -1;
  return pid;
}

bool Subprocess::read_available(std::string& buffer) { return omnilearn::read_available(output_fd_, buffer); }

std::string Subprocess::read_all() {
  std::string text;
  if (output_fd_ < 0) return text;
  ::fcntl(output_fd_, F_SETFL, ::fcntl(output_fd_, F_GETFL) & ~O_NONBLOCK);
  while (read_available(text)) {
  }
  return text;
}

void Subprocess::close_output() { close_fd(output_fd_); }

bool Subprocess::write_input(const std::string& text) { return write_all(input_fd_, text); }

void Subprocess::close_input() { close_fd(input_fd_); }

bool Subprocess::poll_exit() {
  if (exited_ || pid_ <= 0) return exited_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    status_ = status;
  }
  return exited_;
}

void Subprocess::wait() {
  if (pid_ <= 0 || exited_) return;
  int status = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  exited_ = true;
  status_ = status;
}

void Subprocess::signal(int signo) const {
  if (pid_ > 0 && !exited_) ::kill(own_group_ ? -pid_ : pid_, signo);
}

bool read_available(int& fd, std::string& buffer) {
  if (fd < 0) return false;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      buffer.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    close_fd(fd);
    return false;
  }
}

bool write_all(int& fd, const std::string& text) {
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close_fd(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    return std::string("was killed by signal ")
        .append(std::to_string(WTERMSIG(status)))
        .append(" (")
        .append(strsignal(WTERMSIG(status)))
        .append(")");
  }
  if (WIFEXITED(status)) return std::string("exited with code ").append(std::to_string(WEXITSTATUS(status)));
  return "stopped";
}

}  // namespace omnilearn
