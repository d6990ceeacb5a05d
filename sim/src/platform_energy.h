// Power figures a SimGrid platform file brings itself, read from the loaded platform (docs/energy.md): each worker's
// host's `wattage_per_state` and `wattage_off` (SimGrid's host energy plugin's properties), and the links'
// `wattage_range` (its link energy plugin's). LinkEnergy charges the links from the bytes the run sends over them.
// Not thread-safe: the simulation thread.
#pragma once

#include <simgrid/forward.h>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/run/energy_meter.h"
#include "platform_builder.h"

namespace omnilearn::sim {

// Each worker's host's power properties (platform files only; empty for the clusters built here, whose hosts have
// none), for run::EnergyMeter::for_scenario.
std::vector<run::HostWattage> host_wattages(const scenarios::ClusterSpec& cluster, const SimPlatform& platform);

// The links with `wattage_range` ("idle:busy" watts): idle power over the whole run, plus (busy - idle) x the time
// the link would take to carry the run's bytes over it at its bandwidth, the integral of SimGrid's link energy plugin's
// idle + (busy - idle) x load / bandwidth. A split-duplex link is one link: idle once, the bytes of both directions.
class LinkEnergy {
 public:
  // The platform's links with figures; errors name the link and the property.
  static Result<LinkEnergy> for_platform(const simgrid::s4u::Engine& engine);
  bool empty() const { return links_.empty(); }
  // `bytes` crossed `link` (nothing when it has no figures).
  void carry(const simgrid::s4u::Link* link, double bytes);
  // `bytes` went from `src` to `dst`: each link of the route with figures carried them (routes remembered).
  void carry_route(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, double bytes);
  // The links' idle power together (what a longer step costs them).
  double idle_w() const;
  // Joules of a run that lasted `total_time_s`.
  double joules(Seconds total_time_s) const;

 private:
  struct Figures {
    double idle_w = 0.0, busy_w = 0.0, bandwidth_Bps = 0.0, bytes = 0.0;
  };
  std::vector<Figures> links_;
  std::unordered_map<const simgrid::s4u::Link*, std::size_t> index_;  // each direction of a split-duplex link too
  // Per (source, destination): the indices in links_ of its route's links with figures.
  std::map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, std::vector<std::size_t>> routes_;
};

}  // namespace omnilearn::sim
