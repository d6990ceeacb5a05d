#include "collective_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace omnilearn::sim {

namespace sg4 = simgrid::s4u;

Seconds run_schedule(const CollectiveSchedule& schedule, const std::vector<sg4::Host*>& hosts) {
  const Seconds start = sg4::Engine::get_clock();
  std::vector<sg4::CommPtr> comms;
  std::vector<sg4::Link*> links;
  for (const CollectivePhase& phase : schedule.phases) {
    const Seconds phase_start = sg4::Engine::get_clock();
    comms.clear();
    Seconds hop_s = 0.0;
    for (const CollectiveFlow& f : phase.flows) {
      comms.push_back(
          sg4::Comm::sendto_async(hosts[f.src], hosts[f.dst], static_cast<std::uint64_t>(std::llround(f.bytes))));
      if (phase.extra_hops > 0.0) {
        double latency = 0.0;
        links.clear();
        hosts[f.src]->route_to(hosts[f.dst], links, &latency);
        hop_s = std::max(hop_s, latency);
      }
    }
    sg4::Comm::wait_all(comms);
    const Seconds once = sg4::Engine::get_clock() - phase_start + phase.extra_hops * hop_s;
    const Seconds rest = once * phase.repeat - (sg4::Engine::get_clock() - phase_start);
    if (rest > 0.0) sg4::this_actor::sleep_for(rest);
  }
  return sg4::Engine::get_clock() - start;
}

}  // namespace omnilearn::sim
