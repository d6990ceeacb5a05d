// What the testbed derives from a scenario's settings (scenarios::EmulatorSpec, the one home of every testbed
// setting and its default): the network to train, each worker's CPU share of this host, its threads, the checks
// that the host can run the scenario, and Gloo's timeout. Pure functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

using scenarios::Device;
using scenarios::Network;

// The network the testbed trains: the scenario's `emulator.network`, or, when it names none, the one the model's
// name says (lenet* -> LeNet, resnet* -> the small ResNet). Errors name workload.model.
Result<Network> resolve_network(const scenarios::Scenario& scenario);

// Host cores per scenario core: emulator.cpu_per_core, or emulator.cpu_budget over the scenario's busiest moment.
double cpu_scale(const scenarios::Scenario& scenario);
// Nominal CPU share (host cores) of each worker at fraction 1.
std::vector<double> worker_cpu_shares(const scenarios::Scenario& scenario);
// Threads a worker uses: ceil(share), at least 1.
int threads_for_share(double cores);

// Checks that the testbed can run `scenario` on a host with `host_cpus` CPUs: dataset fashion-mnist, a known
// network, BSP or ASP, shares that fit the host. Errors name the field.
Status validate_for_testbed(const scenarios::Scenario& scenario, int host_cpus);

// Gloo's timeout for one collective or message: twice the stall timeout (at least 10 s), so the launcher names a
// stalled worker before its peers' collectives fail; 300 s (Gloo's default) when the stall check is off.
double gloo_timeout_s(const scenarios::EmulatorSpec& settings);

// CPUs this process may run on (sched_getaffinity), at least 1.
int host_cpu_count();

}  // namespace omnilearn::emulator
