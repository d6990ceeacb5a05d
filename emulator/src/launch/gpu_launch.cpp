#include "gpu_launch.h"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/duty_cycle_throttler.h"

namespace omnilearn::emulator::detail {

Status probe_cuda(const std::string& worker_exe) {
  SpawnOptions options;
  options.pipe_output = true;  // its reason, on stdout or stderr
  auto probe = Subprocess::start({worker_exe, "--probe-cuda"}, options);
  if (!probe) return probe.status();
  std::string text = probe->read_all();
  probe->wait();
  const int status = probe->status();
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
  for (std::size_t k = 0; k < workers; ++k) {
    groups.thread_files.push_back((*inner)->thread_files(static_cast<WorkerId>(k)));
  }
  auto cycle = DutyCycleThrottler::wrap(std::move(inner).value(), workers, kGpuDutyPeriodS);
  if (!cycle) return cycle.status();
  groups.throttler = std::move(cycle).value();
  return groups;
}

}  // namespace omnilearn::emulator::detail
