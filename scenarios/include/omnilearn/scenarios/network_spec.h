// NetworkSpec checks: the leaves a fat-tree, torus or dragonfly offers and whether its parameters are complete and
// consistent, for the parser and the simulator's platform builder alike. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// Leaves (hosts or routers at the edge) of `topology` built with `network`: the product of fat-tree `down`, of torus
// `dimensions`, or groups x chassis x routers x nodes; 0 for kStar / kPlatformFile or missing parameters.
std::size_t topology_leaves(Topology topology, const NetworkSpec& network);

// OK when `network` describes `topology` completely (every count positive; fat-tree lists of `levels` entries; the
// dragonfly's pairs of two), else an error naming `where`.<field>.
Status check_network(Topology topology, const NetworkSpec& network, const std::string& where);

// The "fat-tree" / "torus" / "dragonfly" name of a topology (and "star", "platform-file").
const char* topology_name(Topology topology);
// The "ring" / "hierarchical-ring" / "double-binary-tree" / "halving-doubling" / "parameter-server" name of an
// all-reduce algorithm, as `workload.allreduce` spells it.
const char* algorithm_name(AllreduceAlgorithm algorithm);

}  // namespace omnilearn::scenarios
