// The testbed launcher: turns a Scenario into worker processes on this host, each inside its own resource group
// before it trains, replays availability through a ResourceThrottler on the launcher's thread, merges what the
// workers report into a run folder (scenarios::RunWriter, the simulator's schema), and cleans up (processes and
// groups) however the run ends. One run at a time per process: it installs SIGINT/SIGTERM handlers while it runs.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/resource_throttler.h"
#include "omnilearn/scenarios/run_writer.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

using ThrottlerFactory =
    std::function<Result<std::unique_ptr<ResourceThrottler>>(const std::string& run_id, const std::vector<double>& cores)>;

struct LaunchOptions {
  std::string output_dir;                 // the run folder
  std::vector<std::string> argv;          // recorded in manifest.json
  std::vector<std::string> overrides;     // the scenario's --set strings: workers load the same scenario with them
  std::map<std::string, std::string> manifest_fields;
  // The worker program; "" = omnilearn-emulate-worker next to this executable, else the one built with it.
  std::string worker_executable;
  std::vector<std::string> extra_worker_args;  // appended to every worker's arguments (tests)
  ThrottlerFactory make_throttler;        // default: make_cgroup_throttler
  bool prepare_dataset = true;            // decompress Fashion-MNIST first (tests of fake workers turn it off)
  bool check_host_cpus = true;
  std::function<void(const std::vector<pid_t>&)> on_started;  // called once every worker runs (tests)
  std::function<void(const std::string&)> log;                 // progress lines; default stderr
};

enum class RunOutcome { kCompleted, kWorkerFailed, kInterrupted, kTerminated };

struct LaunchResult {
  RunOutcome outcome = RunOutcome::kCompleted;
  int exit_code = 0;                // 0, 1 (a worker failed), 130 (SIGINT), 143 (SIGTERM)
  std::string message;              // what went wrong, naming the worker
  std::string run_dir;
  scenarios::RunSummary summary;    // complete only when outcome is kCompleted
};

// Runs `scenario` on this host. An error Result means nothing was started (bad scenario for the testbed,
// dataset missing, no cgroup permission, ...); once workers run, every outcome comes back as a LaunchResult.
Result<LaunchResult> run_emulation(const scenarios::Scenario& scenario, const EmulatorConfig& config,
                                   const LaunchOptions& options);

// The path of the default worker program (see LaunchOptions::worker_executable).
std::string default_worker_executable();

}  // namespace omnilearn::emulator
