// EmulatorConfig: the testbed's own settings (which network to train, how scenario cores map onto this host's
// CPU, stopping rules), filled from defaults, the scenario and `key=value` settings. Plain values: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

enum class Network { kLeNet, kResNet };  // LeNet-sized CNN (~22k parameters); small ResNet (heavier)
enum class Device { kCpu, kCuda };

// The scenario's `emulator:` section (defaults from scenarios::EmulatorSpec) plus the settings only a launch
// needs (device, cpuset, data and cache paths, stop grace).
struct EmulatorConfig {
  Network network = Network::kLeNet;
  Device device = Device::kCpu;
  // Scenario cores are scaled onto this host: the busiest moment of the scenario (sum of cores in force) gets
  // `cpu_budget` host cores. `cpu_per_core` > 0 sets the scale directly instead.
  double cpu_budget = scenarios::EmulatorSpec{}.cpu_budget;
  double cpu_per_core = scenarios::EmulatorSpec{}.cpu_per_core;
  double cpu_period_s = scenarios::EmulatorSpec{}.cpu_period_s;  // CFS period (NOTES.md: 10 ms beats 100 ms)
  // True (scenario `throttle: compute`): the quota holds the worker's compute threads only; its communication
  // threads (Gloo, the TCPStore) run unthrottled. False (`process`): every thread shares the quota.
  bool throttle_compute_only = scenarios::EmulatorSpec{}.throttle == "compute";
  double sample_cost_s = scenarios::EmulatorSpec{}.sample_cost_s;  // CPU s per sample of the emulated model (0: own)
  std::string cpuset;                  // pin every worker to these CPUs ("" = no pinning)
  double learning_rate = scenarios::EmulatorSpec{}.learning_rate;
  double momentum = scenarios::EmulatorSpec{}.momentum;
  bool lr_scaling = false;             // ASP: η_k = η b_k / b_ref
  std::int64_t warmup_updates = scenarios::EmulatorSpec{}.warmup_updates;  // linear learning-rate warm-up (0: none)
  double target_accuracy = scenarios::EmulatorSpec{}.target_accuracy;  // stop on reaching it (0: no target)
  std::int64_t eval_every = scenarios::EmulatorSpec{}.eval_every;  // steps between evaluations (0: per epoch)
  std::int64_t eval_samples = scenarios::EmulatorSpec{}.eval_samples;  // first N test samples per evaluation
  double time_budget_s = scenarios::EmulatorSpec{}.time_budget_s;  // stop after this much wall time (0: none)
  std::string data_source = "/usr/share/datasets/fashion-mnist";  // the Debian package's files
  std::string cache_dir;               // decompressed copy; "" = $XDG_CACHE_HOME or ~/.cache + /omnilearn/fashion-mnist
  double stop_grace_s = 2.0;           // SIGTERM then SIGKILL after this long when a run is stopped
  // Liveness: a worker that reports no iteration row for this long stops the run (exit 1, naming it); 0: never.
  // Gloo's collective timeout follows it (gloo_timeout_s).
  double stall_timeout_s = scenarios::EmulatorSpec{}.stall_timeout_s;
};

// The defaults overlaid with the scenario's `emulator:` section; the network comes from that section or, when it
// names none, from the model name (network_for_model).
Result<EmulatorConfig> config_from_scenario(const scenarios::Scenario& scenario);

// Applies one `key=value` setting (keys as the fields above; network lenet|resnet, device cpu|cuda).
Status apply_setting(EmulatorConfig& config, std::string_view setting);
// The settings that rebuild `config` through apply_setting (how the launcher hands it to workers).
std::vector<std::string> to_settings(const EmulatorConfig& config);

// Chooses the network from the scenario's model name: lenet* -> LeNet, resnet* -> the small ResNet.
Result<Network> network_for_model(const std::string& model_name);

// Host cores per scenario core (see cpu_budget).
double cpu_scale(const scenarios::Scenario& scenario, const EmulatorConfig& config);
// Nominal CPU share (host cores) of each worker at fraction 1.
std::vector<double> worker_cpu_shares(const scenarios::Scenario& scenario, const EmulatorConfig& config);
// Threads a worker uses: ceil(share), at least 1.
int threads_for_share(double cores);

// Checks that the testbed can run `scenario` on a host with `host_cpus` CPUs: dataset fashion-mnist, a known
// network, BSP or ASP, shares that fit the host. Errors name the field.
Status validate_for_testbed(const scenarios::Scenario& scenario, const EmulatorConfig& config, int host_cpus);

// Gloo's timeout for one collective or message: twice the stall timeout (at least 10 s), so the launcher names a
// stalled worker before its peers' collectives fail; 300 s (Gloo's default) when the stall check is off.
double gloo_timeout_s(const EmulatorConfig& config);

// CPUs this process may run on (sched_getaffinity), at least 1.
int host_cpu_count();

}  // namespace omnilearn::emulator
