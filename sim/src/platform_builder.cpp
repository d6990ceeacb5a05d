#include "platform_builder.h"

#include <string>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;

Status check_node(const scenarios::NodeSpec& node, const std::string& where) {
  if (!(node.speed_flops > 0.0)) return Status::invalid_argument(where + ".speed_flops: must be > 0");
  if (!(node.bandwidth_Bps > 0.0)) return Status::invalid_argument(where + ".bandwidth_Bps: must be > 0");
  if (!(node.latency_s >= 0.0)) return Status::invalid_argument(where + ".latency_s: must be >= 0");
  return Status::ok();
}

sg4::Host* add_node(sg4::NetZone* zone, const sg4::Link* backbone, const std::string& host_name,
                    const scenarios::NodeSpec& node, const std::vector<double>& fractions) {
  std::vector<double> speeds{node.speed_flops};
  for (double f : fractions) speeds.push_back(node.speed_flops * f);
  sg4::Host* host = zone->create_host(host_name, speeds);
  host->set_core_count(1);  // node.speed_flops is the whole worker's speed: one execution uses all of it
  host->seal();
  const sg4::Link* link =
      zone->create_split_duplex_link(host_name + "-link", node.bandwidth_Bps)->set_latency(node.latency_s)->seal();
  zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                  {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(backbone)}, true);
  return host;
}

}  // namespace

Result<SimPlatform> build_platform(const scenarios::ClusterSpec& cluster,
                                   const std::vector<std::vector<double>>& pstate_fractions) {
  if (cluster.workers.empty()) return Status::invalid_argument("cluster.workers: at least one worker is required");
  for (std::size_t k = 0; k < cluster.workers.size(); ++k) {
    OMNI_RETURN_IF_ERROR(check_node(cluster.workers[k], "cluster.workers[" + std::to_string(k) + "]"));
  }
  OMNI_RETURN_IF_ERROR(check_node(cluster.parameter_server, "cluster.parameter_server"));
  if (!(cluster.backbone_bandwidth_Bps > 0.0)) {
    return Status::invalid_argument("cluster.backbone_bandwidth_Bps: must be > 0");
  }
  if (!(cluster.backbone_latency_s >= 0.0)) return Status::invalid_argument("cluster.backbone_latency_s: must be >= 0");

  if (cluster.topology != scenarios::Topology::kStar) {
    return Status::invalid_argument(
        "cluster.topology: the simulator builds star platforms only (each worker's own link into one backbone); "
        "fat-tree and torus are not supported yet");
  }
  sg4::NetZone* zone = sg4::create_star_zone("omnilearn-cluster");
  // SHARED: every flow crossing the switch fabric shares its capacity, so collectives see contention.
  const sg4::Link* backbone = zone->create_link("backbone", cluster.backbone_bandwidth_Bps)
                                  ->set_latency(cluster.backbone_latency_s)
                                  ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                                  ->seal();
  SimPlatform platform;
  platform.workers.reserve(cluster.workers.size());
  static const std::vector<double> kNoFractions;
  for (std::size_t k = 0; k < cluster.workers.size(); ++k) {
    const std::vector<double>& fractions = k < pstate_fractions.size() ? pstate_fractions[k] : kNoFractions;
    platform.workers.push_back(add_node(zone, backbone, "worker-" + std::to_string(k), cluster.workers[k], fractions));
  }
  platform.parameter_server = add_node(zone, backbone, "parameter-server", cluster.parameter_server, kNoFractions);
  zone->seal();
  return platform;
}

}  // namespace omnilearn::sim
