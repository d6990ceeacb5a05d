// LaunchEnvironment: what the testbed launcher asks of the host, behind one seam (as LevelDB's Env): the worker
// program, the dataset, the workers' resource groups, a look at the workers once they run, and the energy counters.
// HostLaunchEnvironment is the real one and run_emulation's default; tests pass a fake
// (tests/emulator/fake_launch_environment.h). A launch calls its environment from the launcher's thread only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/energy_counter.h"
#include "omnilearn/emulator/resource_throttler.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

// The program every worker process runs, and the arguments appended to each one's command line.
struct WorkerProgram {
  std::string path;
  std::vector<std::string> extra_args;
};

using LaunchLog = std::function<void(const std::string&)>;

class LaunchEnvironment {
 public:
  virtual ~LaunchEnvironment() = default;
  virtual WorkerProgram worker_program() = 0;
  // Makes Fashion-MNIST readable in `cache_dir` (dataset_cache.h), from settings.data_source. Called only when the
  // scenario brings no data of its own.
  virtual Status prepare_dataset(const scenarios::EmulatorSpec& settings, const std::string& cache_dir) = 0;
  // One resource group per worker (local ids 0..cores.size()-1), each at its full nominal share `cores[k]`, named
  // after `run_id`; `settings` says how (CPU period, cpuset, what the quota holds, the device). Notes go to `log`.
  virtual Result<WorkerGroups> make_groups(const std::string& run_id, const std::vector<double>& cores,
                                           const scenarios::EmulatorSpec& settings, const LaunchLog& log) = 0;
  // Called once every process of the launch runs, with their pids (this node's workers in order, then the ASP
  // parameter server).
  virtual void workers_started(const std::vector<pid_t>& pids) { (void)pids; }
  // The host's energy counters (energy_counter.h), or an error saying why there are none.
  virtual Result<std::unique_ptr<EnergyCounter>> energy_counter() { return open_host_energy_counter(); }
  // The GPUs' energy counters for a run of GPU workers (NVML), or an error saying why there are none.
  virtual Result<std::unique_ptr<EnergyCounter>> gpu_energy_counter() { return open_nvml(); }
};

// This host: the installed worker program (or the one given), Fashion-MNIST from the Debian package, one cgroup per
// worker (make_cgroup_throttler; on a GPU, equal CPU quotas in a freezer duty cycle) after removing the groups that
// killed launchers left (cgroup_cleanup.h).
class HostLaunchEnvironment final : public LaunchEnvironment {
 public:
  // `worker_executable`: "" = default_worker_executable().
  explicit HostLaunchEnvironment(std::string worker_executable = "");
  WorkerProgram worker_program() override;
  Status prepare_dataset(const scenarios::EmulatorSpec& settings, const std::string& cache_dir) override;
  Result<WorkerGroups> make_groups(const std::string& run_id, const std::vector<double>& cores,
                                   const scenarios::EmulatorSpec& settings, const LaunchLog& log) override;

 private:
  std::string worker_executable_;
};

// The worker program next to this executable, else the one built with it (base/install_layout.h).
std::string default_worker_executable();

}  // namespace omnilearn::emulator
