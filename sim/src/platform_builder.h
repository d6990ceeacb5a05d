// PlatformBuilder: builds the SimGrid platform for a cluster with the C++ platform API (no XML). Must be
// called inside a live engine, before it runs; the hosts it returns belong to that engine.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <simgrid/forward.h>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

struct SimPlatform {
  // Indexed by WorkerId; empty in the compact form (build_platform), where no worker has a SimGrid host.
  std::vector<simgrid::s4u::Host*> workers;
  std::size_t worker_count = 0;                    // the cluster's workers, in either form
  simgrid::s4u::Host* parameter_server = nullptr;  // present in every platform; used by ASP
  // When some host serves several workers (a platform file's `hosts:` naming it twice): worker k's host is number
  // shared_host[k], of shared_host_cores[shared_host[k]] cores. Both empty when every worker has a host of its own.
  std::vector<std::size_t> shared_host;
  std::vector<int> shared_host_cores;
};

// Each worker's share of its host's speed while the workers for which `computing(k)` holds compute at once (a BSP
// step's participants; ASP's workers nearly always): SimGrid's CPU model gives each of n executions on a host of c
// cores min(1, c / n) of a core's speed (Host::get_speed(), which a platform file's worker computes at alone). 1 for
// every worker when no host is shared.
std::vector<double> compute_shares(const SimPlatform& platform, const std::function<bool(WorkerId)>& computing);

// kStar: one host per worker (speed = node.speed_flops, with `pstate_fractions[k]` as extra power states at that
// fraction of it when given), each with its own split-duplex link (bandwidth/latency) to a shared backbone link; the
// parameter server is one more host on the same star. kFatTree, kTorus, kDragonfly: SimGrid's cluster zone of
// cluster.network, worker k on leaf k, the parameter server on the next leaf. kPlatformFile: the file's hosts
// (scenarios::PlatformFileSpec), which must compute at the workers' speeds and cannot take power states; a host
// named for several workers serves them all (its cores shared: compute_shares). Errors name the cluster field at
// fault. `compact` (a star only): the backbone and the parameter server alone, for runs that compute every worker's
// times without SimGrid (BspDriver::needs_worker_hosts): a host with its split-duplex link and route costs SimGrid
// about 2.5 KB per worker, most of a million-worker run's memory.
Result<SimPlatform> build_platform(const scenarios::ClusterSpec& cluster,
                                   const std::vector<std::vector<double>>& pstate_fractions, bool compact = false);

}  // namespace omnilearn::sim
