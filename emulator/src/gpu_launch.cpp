#include "gpu_launch.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>

#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/duty_cycle_throttler.h"

namespace omnilearn::emulator::detail {

Status probe_cuda(const std::string& worker_exe) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::io_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) return Status::io_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(out[1], STDERR_FILENO);
    const char* argv[] = {worker_exe.c_str(), "--probe-cuda", nullptr};
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[512];
  for (ssize_t got; (got = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::ok();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto first_line = text.find('\n');
  const std::string reason = first_line == std::string::npos ? text : text.substr(first_line + 1);
  return Status::invalid_argument(reason.empty() ? "--device cuda: " + worker_exe + " --probe-cuda failed" : reason);
}

std::vector<int> mps_percentages(const std::vector<double>& shares) {
  const double total = std::accumulate(shares.begin(), shares.end(), 0.0);
  std::vector<int> pct;
  for (const double s : shares) {
    const double p = total > 0.0 ? 100.0 * s / total : 100.0 / static_cast<double>(shares.size());
    pct.push_back(std::clamp(static_cast<int>(std::lround(p)), 1, 100));
  }
  return pct;
}

Result<WorkerGroups> make_gpu_throttler(const std::string& run_id, std::size_t workers, int host_cpus,
                                        const scenarios::EmulatorSpec& config) {
  const double each = std::max(0.1, static_cast<double>(host_cpus) / static_cast<double>(std::max<std::size_t>(workers, 1)));
  auto inner = make_cgroup_throttler({run_id, std::vector<double>(workers, each), config.cpu_period_s, config.cpuset,
                                      config.throttle});
  if (!inner) return inner.status();
  WorkerGroups groups;
  for (std::size_t k = 0; k < workers; ++k) groups.thread_files.push_back((*inner)->thread_files(static_cast<WorkerId>(k)));
  auto cycle = DutyCycleThrottler::wrap(std::move(inner).value(), workers, kGpuDutyPeriodS);
  if (!cycle) return cycle.status();
  groups.throttler = std::move(cycle).value();
  return groups;
}

}  // namespace omnilearn::emulator::detail
