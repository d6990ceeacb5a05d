#include "process_poll.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "omnilearn/base/subprocess.h"

extern char** environ;

namespace omnilearn::emulator::detail {

std::vector<std::string> worker_thread_env(int threads, const std::vector<std::string>& drop,
                                           const std::vector<std::string>& extra) {
  std::vector<std::string> dropped = {"OMP_WAIT_POLICY=", "OMP_NUM_THREADS=", "MKL_NUM_THREADS="};
  for (const std::string& name : drop) dropped.push_back(name + "=");
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (std::none_of(dropped.begin(), dropped.end(), [&](const std::string& p) { return kv.starts_with(p); })) {
      env.emplace_back(kv);
    }
  }
  env.insert(env.end(), extra.begin(), extra.end());
  env.push_back("OMP_WAIT_POLICY=PASSIVE");
  env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  env.push_back("MKL_NUM_THREADS=" + std::to_string(threads));
  return env;
}

void drain_lines(WorkerProcess& worker, std::string& buffer, const std::function<void(std::string_view)>& on_line) {
  worker.read_available(buffer);
  std::size_t start = 0;
  for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    on_line(std::string_view(buffer).substr(start, nl - start));
  }
  buffer.erase(0, start);
}

Status poll_workers(int signal_fd, const std::vector<std::unique_ptr<WorkerProcess>>& workers, int timeout_ms,
                    int& stop_signal, const std::function<void(std::size_t)>& drain) {
  std::vector<pollfd> fds{{signal_fd, POLLIN, 0}};
  std::vector<std::size_t> owner{workers.size()};  // fds[i] is the report pipe of workers[owner[i]] (i > 0)
  for (std::size_t k = 0; k < workers.size(); ++k) {
    if (workers[k]->report_fd() >= 0) fds.push_back({workers[k]->report_fd(), POLLIN, 0}), owner.push_back(k);
  }
  const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
  if (ready < 0 && errno != EINTR) return Status::io_error(std::string("poll: ") + std::strerror(errno));
  if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
    char signo = 0;
    if (::read(signal_fd, &signo, 1) == 1) stop_signal = signo;
  }
  for (std::size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents != 0) drain(owner[i]);
  }
  return Status::ok();
}

Status exit_failure(const WorkerProcess& worker, const std::string& name) {
  if (!worker.exited()) return Status::ok();
  const int status = worker.status();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::ok();
  return Status::internal(name + " (pid " + std::to_string(worker.pid()) + ") " + describe_exit(status));
}

void stop_workers(const std::vector<std::unique_ptr<WorkerProcess>>& workers, double grace_s) {
  using Clock = std::chrono::steady_clock;
  for (const auto& w : workers) w->signal(SIGTERM);
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace_s);
  for (;;) {
    bool all = true;
    for (const auto& w : workers) all = w->poll_exit() && all;
    if (all || Clock::now() >= deadline) break;
    ::usleep(20000);
  }
  for (const auto& w : workers) {
    if (!w->exited()) w->signal(SIGKILL);
    w->wait();
  }
}

}  // namespace omnilearn::emulator::detail
