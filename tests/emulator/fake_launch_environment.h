// FakeLaunchEnvironment: the launcher's seam (launch_environment.h) for tests. The worker program is given (the
// fake worker or the real one); the dataset is left alone and the resource groups are FakeThrottlers that the test
// reads after the run, unless the test asks for the host's. Header-only; for use inside namespace
// omnilearn::emulator. Not thread-safe (the launcher calls it from its own thread).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/emulator/fake_throttler.h"
#include "omnilearn/emulator/launch_environment.h"

namespace omnilearn::emulator::testing {

class FakeLaunchEnvironment final : public LaunchEnvironment {
 public:
  // `worker`: the program every worker runs; `args`: appended to each worker's command line.
  explicit FakeLaunchEnvironment(std::string worker, std::vector<std::string> args = {})
      : program_{std::move(worker), std::move(args)}, host_(program_.path) {}

  // What the test sets before the launch.
  bool host_groups = false;   // the host's cgroups (HostLaunchEnvironment) instead of a FakeThrottler
  bool host_dataset = false;  // prepare Fashion-MNIST as the host does, instead of leaving it alone
  Status groups_error;        // make_groups fails with it
  std::function<void(const std::vector<pid_t>&)> on_started;
  // The energy counters the launch gets; unset: none (the test's result must not depend on the host's RAPL).
  std::function<Result<std::unique_ptr<EnergyCounter>>()> counter;
  std::function<Result<std::unique_ptr<EnergyCounter>>()> gpu_counter;  // the same for a GPU run's (NVML)

  // What the test reads after it.
  int groups_made = 0;                       // make_groups calls
  std::shared_ptr<FakeThrottler> throttler;  // the last FakeThrottler handed out (it outlives the launch)

  WorkerProgram worker_program() override { return program_; }
  Status prepare_dataset(const scenarios::EmulatorSpec& settings, const std::string& cache_dir) override {
    return host_dataset ? host_.prepare_dataset(settings, cache_dir) : Status::ok();
  }
  Result<WorkerGroups> make_groups(const std::string& run_id, const std::vector<double>& cores,
                                   const scenarios::EmulatorSpec& settings, const LaunchLog& log) override {
    ++groups_made;
    if (!groups_error.is_ok()) return groups_error;
    if (host_groups) return host_.make_groups(run_id, cores, settings, log);
    throttler = std::make_shared<FakeThrottler>(cores.size());
    return WorkerGroups{std::make_unique<Shared>(throttler), {}};
  }
  void workers_started(const std::vector<pid_t>& pids) override {
    if (on_started) on_started(pids);
  }
  Result<std::unique_ptr<EnergyCounter>> energy_counter() override {
    if (counter) return counter();
    return Status::not_found("the test's environment has no energy counters");
  }
  Result<std::unique_ptr<EnergyCounter>> gpu_energy_counter() override {
    if (gpu_counter) return gpu_counter();
    return Status::not_found("the test's environment has no GPU energy counters");
  }

 private:
  // Forwards to the FakeThrottler the environment keeps, so the test can read it after the launcher dropped this.
  class Shared final : public ResourceThrottler {
   public:
    explicit Shared(std::shared_ptr<FakeThrottler> f) : f_(std::move(f)) {}
    Status attach(WorkerId w, pid_t pid) override { return f_->attach(w, pid); }
    Status apply(WorkerId w, double x) override { return f_->apply(w, x); }
    Status remove() override { return f_->remove(); }

   private:
    std::shared_ptr<FakeThrottler> f_;
  };

  WorkerProgram program_;
  HostLaunchEnvironment host_;
};

}  // namespace omnilearn::emulator::testing
