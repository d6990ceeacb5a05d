// PlatformBuilder: builds the SimGrid platform for a cluster with the C++ platform API (no XML). Must be
// called inside a live engine, before it runs; the hosts it returns belong to that engine.
#pragma once

#include <vector>

#include <simgrid/forward.h>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

struct SimPlatform {
  std::vector<simgrid::s4u::Host*> workers;       // indexed by WorkerId
  simgrid::s4u::Host* parameter_server = nullptr;  // present in every platform; used by ASP
};

// kStar: one host per worker (speed = node.speed_flops, with `pstate_fractions[k]` as extra power states at that
// fraction of it when given), each with its own split-duplex link (bandwidth/latency) to a shared backbone link; the
// parameter server is one more host on the same star. kFatTree, kTorus, kDragonfly: SimGrid's cluster zone of
// cluster.network, worker k on leaf k, the parameter server on the next leaf. kPlatformFile: the file's hosts
// (scenarios::PlatformFileSpec), which must compute at the workers' speeds and cannot take power states. Errors name
// the cluster field at fault.
Result<SimPlatform> build_platform(const scenarios::ClusterSpec& cluster,
                                   const std::vector<std::vector<double>>& pstate_fractions);

}  // namespace omnilearn::sim
