#include "platform_energy.h"

#include <exception>
#include <map>
#include <optional>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <string_view>

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;

std::string property(const char* value) { return value == nullptr ? std::string() : std::string(value); }

// A split-duplex link's directions are links named <link>_UP and <link>_DOWN; the file's properties are the link's.
std::string file_link_name(const std::string& name) {
  for (std::string_view suffix : {"_UP", "_DOWN"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

}  // namespace

std::vector<run::HostWattage> host_wattages(const scenarios::ClusterSpec& cluster, const SimPlatform& platform) {
  std::vector<run::HostWattage> out;
  if (cluster.topology != scenarios::Topology::kPlatformFile) return out;
  std::unordered_map<const sg4::Host*, int> workers;
  for (const sg4::Host* h : platform.workers) ++workers[h];
  for (const sg4::Host* h : platform.workers) {
    run::HostWattage w;
    w.host = h->get_name();
    w.per_state = property(h->get_property("wattage_per_state"));
    w.off = property(h->get_property("wattage_off"));
    w.pstate = static_cast<int>(h->get_pstate());
    w.pstates = static_cast<int>(h->get_pstate_count());
    for (unsigned long i = 0; i < h->get_pstate_count(); ++i) w.speeds.push_back(h->get_pstate_speed(i));
    w.workers = workers[h];
    out.push_back(std::move(w));
  }
  return out;
}

Result<LinkEnergy> LinkEnergy::for_platform(const sg4::Engine& engine) {
  LinkEnergy out;
  std::map<std::string, std::size_t> by_name;  // the file's link name: its figures
  for (const sg4::Link* link : engine.get_all_links()) {
    const std::string name = file_link_name(link->get_name());
    const char* range = link->get_property("wattage_range");
    if (range == nullptr && name != link->get_name()) {
      try {
        if (const sg4::Link* whole = engine.split_duplex_link_by_name(name); whole != nullptr) {
          range = whole->get_property("wattage_range");
        }
      } catch (const std::exception&) {
        // Not a split-duplex link after all: a link whose own name ends so.
      }
    }
    if (range == nullptr) continue;
    auto [it, added] = by_name.emplace(name, out.links_.size());
    if (added) {
      const std::string_view text = range;
      const std::size_t colon = text.find(':');
      const std::optional<double> idle =
          colon == std::string_view::npos ? std::nullopt : run::parse_watts(text.substr(0, colon));
      const std::optional<double> busy =
          colon == std::string_view::npos ? std::nullopt : run::parse_watts(text.substr(colon + 1));
      if (!idle || !busy) {
        return Status::invalid_argument("cluster.platform: link '" + name + "': property wattage_range '" +
                                        std::string(text) + "' is not idle:busy (watts >= 0)");
      }
      out.links_.push_back(Figures{*idle, *busy, link->get_bandwidth(), 0.0});
    }
    out.index_[link] = it->second;
  }
  return out;
}

void LinkEnergy::carry(const sg4::Link* link, double bytes) {
  if (auto it = index_.find(link); it != index_.end()) links_[it->second].bytes += bytes;
}

void LinkEnergy::carry_route(const sg4::Host* src, const sg4::Host* dst, double bytes) {
  auto [it, added] = routes_.try_emplace({src, dst});
  if (added) {
    std::vector<sg4::Link*> route;
    double latency = 0.0;
    src->route_to(dst, route, &latency);
    for (const sg4::Link* l : route) {
      if (auto at = index_.find(l); at != index_.end()) it->second.push_back(at->second);
    }
  }
  for (std::size_t i : it->second) links_[i].bytes += bytes;
}

double LinkEnergy::idle_w() const {
  double w = 0.0;
  for (const Figures& l : links_) w += l.idle_w;
  return w;
}

double LinkEnergy::joules(Seconds total_time_s) const {
  double j = 0.0;
  for (const Figures& l : links_) {
    j += l.idle_w * total_time_s + (l.busy_w - l.idle_w) * (l.bandwidth_Bps > 0.0 ? l.bytes / l.bandwidth_Bps : 0.0);
  }
  return j;
}

}  // namespace omnilearn::sim
