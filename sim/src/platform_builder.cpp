#include "platform_builder.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>
#include <unordered_map>

#include "omnilearn/scenarios/network_spec.h"

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;
using scenarios::Topology;

Status check_node(const scenarios::NodeSpec& node, const std::string& where) {
  if (!(node.speed_flops > 0.0)) return Status::invalid_argument(where + ".speed_flops: must be > 0");
  if (!(node.bandwidth_Bps > 0.0)) return Status::invalid_argument(where + ".bandwidth_Bps: must be > 0");
  if (!(node.latency_s >= 0.0)) return Status::invalid_argument(where + ".latency_s: must be >= 0");
  return Status::ok();
}

sg4::Host* make_host(sg4::NetZone* zone, const std::string& host_name, const scenarios::NodeSpec& node,
                     const std::vector<double>& fractions) {
  std::vector<double> speeds{node.speed_flops};
  for (double f : fractions) speeds.push_back(node.speed_flops * f);
  sg4::Host* host = zone->create_host(host_name, speeds);
  host->set_core_count(1);  // node.speed_flops is the whole worker's speed: one execution uses all of it
  host->seal();
  return host;
}

sg4::Host* add_node(sg4::NetZone* zone, const sg4::Link* backbone, const std::string& host_name,
                    const scenarios::NodeSpec& node, const std::vector<double>& fractions) {
  sg4::Host* host = make_host(zone, host_name, node, fractions);
  const sg4::Link* link =
      zone->create_split_duplex_link(host_name + "-link", node.bandwidth_Bps)->set_latency(node.latency_s)->seal();
  zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                  {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(backbone)}, true);
  return host;
}

const std::vector<double>& fractions_of(const std::vector<std::vector<double>>& pstate_fractions, std::size_t k) {
  static const std::vector<double> kNoFractions;
  return k < pstate_fractions.size() ? pstate_fractions[k] : kNoFractions;
}

Result<SimPlatform> build_star(const scenarios::ClusterSpec& cluster,
                               const std::vector<std::vector<double>>& pstate_fractions, bool compact) {
  sg4::NetZone* zone = sg4::create_star_zone("omnilearn-cluster");
  // SHARED: every flow crossing the switch fabric shares its capacity, so collectives see contention.
  const sg4::Link* backbone = zone->create_link("backbone", cluster.backbone_bandwidth_Bps)
                                  ->set_latency(cluster.backbone_latency_s)
                                  ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                                  ->seal();
  SimPlatform platform;
  platform.worker_count = cluster.workers.size();
  if (!compact) platform.workers.reserve(cluster.workers.size());
  for (std::size_t k = 0; !compact && k < cluster.workers.size(); ++k) {
    platform.workers.push_back(
        add_node(zone, backbone, "worker-" + std::to_string(k), cluster.workers[k], fractions_of(pstate_fractions, k)));
  }
  platform.parameter_server = add_node(zone, backbone, "parameter-server", cluster.parameter_server, {});
  zone->seal();
  return platform;
}

std::vector<unsigned int> to_uints(const std::vector<std::int64_t>& v) {
  std::vector<unsigned int> out;
  for (std::int64_t x : v) out.push_back(static_cast<unsigned int>(x));
  return out;
}

// Fat-tree, torus or dragonfly through SimGrid's zone builders: leaf i < workers is worker i, the next leaf the
// parameter server, any further leaf a router.
Result<SimPlatform> build_cluster_zone(const scenarios::ClusterSpec& cluster,
                                       const std::vector<std::vector<double>>& pstate_fractions) {
  const scenarios::NetworkSpec& net = cluster.network;
  const std::size_t leaves = scenarios::topology_leaves(cluster.topology, net);
  const std::size_t n = cluster.workers.size();
  if (leaves < n + 1) {
    return Status::invalid_argument("cluster.topology: " + std::to_string(leaves) + " leaves for " + std::to_string(n) +
                                    " workers and the parameter server (needs " + std::to_string(n + 1) + ")");
  }
  if (!(net.bandwidth_Bps > 0.0)) return Status::invalid_argument("cluster.topology.bandwidth: must be > 0");
  if (!(net.latency_s >= 0.0)) return Status::invalid_argument("cluster.topology.latency: must be >= 0");
  SimPlatform platform;
  platform.worker_count = n;
  platform.workers.resize(n, nullptr);
  auto leaf =
      [&](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/,
          unsigned long id) -> std::pair<simgrid::kernel::routing::NetPoint*, simgrid::kernel::routing::NetPoint*> {
    if (id < n) {
      platform.workers[id] =
          make_host(zone, "worker-" + std::to_string(id), cluster.workers[id], fractions_of(pstate_fractions, id));
      return {platform.workers[id]->get_netpoint(), nullptr};
    }
    if (id == n) {
      platform.parameter_server = make_host(zone, "parameter-server", cluster.parameter_server, {});
      return {platform.parameter_server->get_netpoint(), nullptr};
    }
    return {zone->create_router("spare-" + std::to_string(id)), nullptr};
  };
  const sg4::ClusterCallbacks callbacks(leaf);
  const auto policy = sg4::Link::SharingPolicy::SPLITDUPLEX;
  sg4::NetZone* zone = nullptr;
  switch (cluster.topology) {
    case Topology::kFatTree:
      zone = sg4::create_fatTree_zone("omnilearn-cluster", nullptr,
                                      sg4::FatTreeParams(static_cast<unsigned int>(net.levels), to_uints(net.down),
                                                         to_uints(net.up), to_uints(net.link_count)),
                                      callbacks, net.bandwidth_Bps, net.latency_s, policy);
      break;
    case Topology::kTorus: {
      std::vector<unsigned long> dims;
      for (std::int64_t d : net.dimensions) dims.push_back(static_cast<unsigned long>(d));
      zone = sg4::create_torus_zone("omnilearn-cluster", nullptr, dims, callbacks, net.bandwidth_Bps, net.latency_s,
                                    policy);
      break;
    }
    case Topology::kDragonfly: {
      auto pair = [](const std::vector<std::int64_t>& v) {
        return std::make_pair(static_cast<unsigned int>(v[0]), static_cast<unsigned int>(v[1]));
      };
      zone = sg4::create_dragonfly_zone("omnilearn-cluster", nullptr,
                                        sg4::DragonflyParams(pair(net.groups), pair(net.chassis), pair(net.routers),
                                                             static_cast<unsigned int>(net.nodes)),
                                        callbacks, net.bandwidth_Bps, net.latency_s, policy);
      break;
    }
    default:
      return Status::internal("build_cluster_zone: not a cluster topology");
  }
  zone->seal();
  for (std::size_t k = 0; k < n; ++k) {
    if (platform.workers[k] == nullptr) {
      return Status::internal("cluster.topology: leaf " + std::to_string(k) + " was not built");
    }
  }
  return platform;
}

// Fills platform.shared_host and shared_host_cores when some host serves several workers.
void find_shared_hosts(SimPlatform& platform) {
  std::unordered_map<const sg4::Host*, std::size_t> index;
  std::vector<std::size_t> host;
  std::vector<int> cores;
  for (const sg4::Host* h : platform.workers) {
    const auto [it, added] = index.emplace(h, cores.size());
    if (added) cores.push_back(h->get_core_count());
    host.push_back(it->second);
  }
  if (cores.size() == host.size()) return;
  platform.shared_host = std::move(host);
  platform.shared_host_cores = std::move(cores);
}

// A SimGrid platform file: worker k is cluster.platform.hosts[k] (all hosts sorted by name when the list is empty),
// the parameter server cluster.platform.parameter_server (else the first host no worker uses).
Result<SimPlatform> load_platform_file(const scenarios::ClusterSpec& cluster,
                                       const std::vector<std::vector<double>>& pstate_fractions) {
  const scenarios::PlatformFileSpec& file = cluster.platform;
  sg4::Engine* engine = sg4::Engine::get_instance();
  try {
    engine->load_platform(file.path);
  } catch (const std::exception& e) {
    return Status::invalid_argument("cluster.platform: '" + file.path + "': " + e.what());
  }
  std::vector<sg4::Host*> all = engine->get_all_hosts();
  std::sort(all.begin(), all.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return a->get_name() < b->get_name(); });
  std::vector<std::string> names = file.hosts;
  if (names.empty()) {
    for (const sg4::Host* h : all) names.push_back(h->get_name());
  }
  const std::size_t n = cluster.workers.size();
  if (names.size() < n) {
    return Status::invalid_argument("cluster.platform: '" + file.path + "' names " + std::to_string(names.size()) +
                                    " hosts for " + std::to_string(n) + " workers");
  }
  SimPlatform platform;
  platform.worker_count = n;
  for (std::size_t k = 0; k < n; ++k) {
    sg4::Host* host = engine->host_by_name_or_null(names[k]);
    if (host == nullptr) {
      return Status::invalid_argument("cluster.platform.hosts[" + std::to_string(k) + "]: no host '" + names[k] +
                                      "' in '" + file.path + "'");
    }
    const double want = cluster.workers[k].speed_flops;
    if (std::abs(host->get_speed() - want) > 1e-9 * want) {
      return Status::invalid_argument("cluster.platform: host '" + names[k] + "' computes at " +
                                      std::to_string(host->get_speed()) + " flop/s but worker " + std::to_string(k) +
                                      " is given " + std::to_string(want) + " (make the speeds equal)");
    }
    if (!fractions_of(pstate_fractions, k).empty()) {
      return Status::invalid_argument(
          "cluster.platform: epoch availability schedules need power states that a "
          "platform file's hosts do not have (use timed availability)");
    }
    platform.workers.push_back(host);
  }
  find_shared_hosts(platform);
  if (!file.parameter_server.empty()) {
    platform.parameter_server = engine->host_by_name_or_null(file.parameter_server);
    if (platform.parameter_server == nullptr) {
      return Status::invalid_argument("cluster.platform.parameter_server: no host '" + file.parameter_server + "'");
    }
  } else {
    for (sg4::Host* h : all) {
      if (std::find(platform.workers.begin(), platform.workers.end(), h) == platform.workers.end()) {
        platform.parameter_server = h;
        break;
      }
    }
    if (platform.parameter_server == nullptr) {
      return Status::invalid_argument("cluster.platform: '" + file.path +
                                      "' needs one host more than the workers (the parameter server)");
    }
  }
  return platform;
}

}  // namespace

std::vector<double> compute_shares(const SimPlatform& platform, const std::function<bool(WorkerId)>& computing) {
  std::vector<double> shares(platform.worker_count, 1.0);
  if (platform.shared_host.empty()) return shares;
  std::vector<std::size_t> running(platform.shared_host_cores.size(), 0);
  for (WorkerId k = 0; k < shares.size(); ++k) {
    if (computing(k)) ++running[platform.shared_host[k]];
  }
  for (WorkerId k = 0; k < shares.size(); ++k) {
    const std::size_t h = platform.shared_host[k];
    const auto cores = static_cast<double>(platform.shared_host_cores[h]);
    // A worker that is not computing: its share were it to join them.
    const auto n = static_cast<double>(running[h] + (computing(k) ? 0 : 1));
    shares[k] = std::min(1.0, cores / n);
  }
  return shares;
}

Result<SimPlatform> build_platform(const scenarios::ClusterSpec& cluster,
                                   const std::vector<std::vector<double>>& pstate_fractions, bool compact) {
  if (cluster.workers.empty()) return Status::invalid_argument("cluster.workers: at least one worker is required");
  for (std::size_t k = 0; k < cluster.workers.size(); ++k) {
    OMNI_RETURN_IF_ERROR(check_node(cluster.workers[k], "cluster.workers[" + std::to_string(k) + "]"));
  }
  OMNI_RETURN_IF_ERROR(check_node(cluster.parameter_server, "cluster.parameter_server"));
  if (!(cluster.backbone_bandwidth_Bps > 0.0)) {
    return Status::invalid_argument("cluster.backbone_bandwidth_Bps: must be > 0");
  }
  if (!(cluster.backbone_latency_s >= 0.0)) return Status::invalid_argument("cluster.backbone_latency_s: must be >= 0");
  if (compact && cluster.topology != Topology::kStar) {
    return Status::internal("build_platform: the compact form is a star's");
  }
  switch (cluster.topology) {
    case Topology::kStar:
      return build_star(cluster, pstate_fractions, compact);
    case Topology::kPlatformFile:
      return load_platform_file(cluster, pstate_fractions);
    default:
      break;
  }
  OMNI_RETURN_IF_ERROR(scenarios::check_network(cluster.topology, cluster.network, "cluster.topology"));
  return build_cluster_zone(cluster, pstate_fractions);
}

}  // namespace omnilearn::sim
