#include "omnilearn/scenarios/network_spec.h"

#include <vector>

namespace omnilearn::scenarios {
namespace {

std::size_t product(const std::vector<std::int64_t>& v) {
  std::size_t p = v.empty() ? 0 : 1;
  for (std::int64_t x : v) p *= x > 0 ? static_cast<std::size_t>(x) : 0;
  return p;
}

Status check_counts(const std::vector<std::int64_t>& v, std::size_t size, const std::string& field) {
  if (v.size() != size) {
    return Status::invalid_argument(field + ": expected " + std::to_string(size) + " positive integers, got " +
                                    std::to_string(v.size()));
  }
  for (std::int64_t x : v) {
    if (x <= 0) return Status::invalid_argument(field + ": expected positive integers");
  }
  return Status::ok();
}

}  // namespace

const char* topology_name(Topology topology) {
  switch (topology) {
    case Topology::kStar:
      return "star";
    case Topology::kFatTree:
      return "fat-tree";
    case Topology::kTorus:
      return "torus";
    case Topology::kDragonfly:
      return "dragonfly";
    case Topology::kPlatformFile:
      return "platform-file";
  }
  return "?";
}

const char* algorithm_name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::kRing:
      return "ring";
    case AllreduceAlgorithm::kHierarchicalRing:
      return "hierarchical-ring";
    case AllreduceAlgorithm::kDoubleBinaryTree:
      return "double-binary-tree";
    case AllreduceAlgorithm::kHalvingDoubling:
      return "halving-doubling";
    case AllreduceAlgorithm::kParameterServer:
      return "parameter-server";
  }
  return "?";
}

std::size_t topology_leaves(Topology topology, const NetworkSpec& n) {
  switch (topology) {
    case Topology::kFatTree:
      return product(n.down);
    case Topology::kTorus:
      return product(n.dimensions);
    case Topology::kDragonfly:
      if (n.groups.size() != 2 || n.chassis.size() != 2 || n.routers.size() != 2 || n.nodes <= 0) return 0;
      return product({n.groups[0], n.chassis[0], n.routers[0], n.nodes});
    default:
      return 0;
  }
}

Status check_network(Topology topology, const NetworkSpec& n, const std::string& where) {
  if (!(n.bandwidth_Bps > 0.0)) return Status::invalid_argument(where + ".bandwidth: must be > 0");
  if (!(n.latency_s >= 0.0)) return Status::invalid_argument(where + ".latency: must be >= 0");
  switch (topology) {
    case Topology::kFatTree: {
      if (n.levels <= 0) return Status::invalid_argument(where + ".levels: expected a positive integer");
      const auto levels = static_cast<std::size_t>(n.levels);
      OMNI_RETURN_IF_ERROR(check_counts(n.down, levels, where + ".down"));
      OMNI_RETURN_IF_ERROR(check_counts(n.up, levels, where + ".up"));
      return check_counts(n.link_count, levels, where + ".link_count");
    }
    case Topology::kTorus:
      if (n.dimensions.empty()) return Status::invalid_argument(where + ".dimensions: expected positive integers");
      return check_counts(n.dimensions, n.dimensions.size(), where + ".dimensions");
    case Topology::kDragonfly:
      OMNI_RETURN_IF_ERROR(check_counts(n.groups, 2, where + ".groups"));
      OMNI_RETURN_IF_ERROR(check_counts(n.chassis, 2, where + ".chassis"));
      OMNI_RETURN_IF_ERROR(check_counts(n.routers, 2, where + ".routers"));
      if (n.nodes <= 0) return Status::invalid_argument(where + ".nodes: expected a positive integer");
      return Status::ok();
    default:
      return Status::ok();
  }
}

}  // namespace omnilearn::scenarios
