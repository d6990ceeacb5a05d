#include "omnilearn/emulator/launch_environment.h"

#include <filesystem>

#include "omnilearn/base/install_layout.h"
#include "omnilearn/emulator/cgroup_cleanup.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/emulator_config.h"
#include "gpu_launch.h"

namespace omnilearn::emulator {
namespace {

// One cgroup per worker and, per worker, the files that move its threads out of its quota and back.
Result<WorkerGroups> cpu_groups(const CgroupThrottlerOptions& options) {
  auto cgroups = make_cgroup_throttler(options);
  if (!cgroups) return cgroups.status();
  WorkerGroups groups;
  for (std::size_t k = 0; k < options.nominal_cores.size(); ++k) {
    groups.thread_files.push_back((*cgroups)->thread_files(static_cast<WorkerId>(k)));
  }
  groups.throttler = std::move(cgroups).value();
  return groups;
}

}  // namespace

std::string default_worker_executable() {
  const std::filesystem::path exe = current_executable();
  return worker_executable(exe, locate_install_layout(exe));
}

HostLaunchEnvironment::HostLaunchEnvironment(std::string worker_executable)
    : worker_executable_(std::move(worker_executable)) {}

WorkerProgram HostLaunchEnvironment::worker_program() {
  return {worker_executable_.empty() ? default_worker_executable() : worker_executable_, {}};
}

Status HostLaunchEnvironment::prepare_dataset(const scenarios::EmulatorSpec& settings, const std::string& cache_dir) {
  auto prepared = prepare_fashion_mnist(settings.data_source, cache_dir);
  return prepared.is_ok() ? Status::ok() : prepared.status();
}

Result<WorkerGroups> HostLaunchEnvironment::make_groups(const std::string& run_id, const std::vector<double>& cores,
                                                        const scenarios::EmulatorSpec& settings, const LaunchLog& log) {
  // A launcher killed with SIGKILL left its groups: remove those of launchers that are gone (never a live run's).
  const CgroupCleanup stale = remove_stale_cgroups();
  for (const std::string& f : stale.removed) log("omnilearn emulate: removed the stale cgroup " + f);
  if (!stale.status.is_ok()) log("omnilearn emulate: note: " + stale.status.message());
  auto groups = settings.device == Device::kCuda
                    ? detail::make_gpu_throttler(run_id, cores.size(), host_cpu_count(), settings)
                    : cpu_groups({run_id, cores, settings.cpu_period_s, settings.cpuset, settings.throttle});
  if (!groups) return groups.status();
  const bool split = !groups->thread_files.empty() && !groups->thread_files[0].comm.empty();
  if (settings.throttle == scenarios::QuotaScope::kCompute && !split) {
    log("omnilearn emulate: note: cgroup v2 here, so each quota holds its whole worker process, communication "
        "threads included (emulator.throttle: compute splits them on cgroup v1 only)");
  }
  return groups;
}

}  // namespace omnilearn::emulator
