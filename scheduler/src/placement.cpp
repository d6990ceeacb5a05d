#include "omnilearn/scheduler/placement.h"

#include <algorithm>
#include <map>

#include "omnilearn/base/check.h"

namespace omnilearn::scheduler {
namespace {

// Free slot indices of every host, lowest first; and how many of the current job's slots each host holds.
struct FreeSlots {
  std::vector<std::vector<int>> free;  // per host, sorted

  explicit FreeSlots(const ClusterFacts& cluster) {
    for (const HostFacts& h : cluster.hosts) {
      std::vector<int> s(static_cast<std::size_t>(h.slots));
      for (int i = 0; i < h.slots; ++i) s[static_cast<std::size_t>(i)] = i;
      free.push_back(std::move(s));
    }
  }
  void take(const DeviceSlot& s) {
    auto& f = free[s.host];
    auto it = std::lower_bound(f.begin(), f.end(), s.slot);
    OMNI_CHECK(it != f.end() && *it == s.slot, "placement: a slot was taken twice");
    f.erase(it);
  }
  DeviceSlot take_lowest(std::size_t host) {
    const DeviceSlot s{host, free[host].front()};
    free[host].erase(free[host].begin());
    return s;
  }
  int count(std::size_t host) const { return static_cast<int>(free[host].size()); }
};

// The job's slots per host.
std::map<std::size_t, int> on_host(const std::vector<DeviceSlot>& slots) {
  std::map<std::size_t, int> n;
  for (const DeviceSlot& s : slots) ++n[s.host];
  return n;
}

// Adds `need` slots on the hosts `hosts` (of one kind) to `slots`.
void place_kind(FreeSlots& free, const std::vector<std::size_t>& hosts, int need, Placement placement,
                std::vector<DeviceSlot>& slots) {
  std::map<std::size_t, int> mine = on_host(slots);
  if (placement == Placement::kSpread) {
    for (; need > 0; --need) {
      std::size_t best = hosts.size();
      for (std::size_t i = 0; i < hosts.size(); ++i) {
        const std::size_t h = hosts[i];
        if (free.count(h) == 0) continue;
        if (best == hosts.size()) {
          best = i;
          continue;
        }
        const std::size_t b = hosts[best];
        if (mine[h] < mine[b] || (mine[h] == mine[b] && free.count(h) > free.count(b))) best = i;
      }
      OMNI_CHECK(best < hosts.size(), "placement: a kind has fewer free slots than its count");
      slots.push_back(free.take_lowest(hosts[best]));
      ++mine[hosts[best]];
    }
    return;
  }
  // Pack: the hosts the job is on (most of its slots first), then best fit, then the host with the most free.
  std::vector<std::size_t> already;
  for (std::size_t h : hosts) {
    if (mine[h] > 0 && free.count(h) > 0) already.push_back(h);
  }
  std::stable_sort(already.begin(), already.end(), [&](std::size_t a, std::size_t b) { return mine[a] > mine[b]; });
  for (std::size_t h : already) {
    while (need > 0 && free.count(h) > 0) slots.push_back(free.take_lowest(h)), --need;
  }
  while (need > 0) {
    std::size_t fit = hosts.size();
    std::size_t most = hosts.size();
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      const int f = free.count(hosts[i]);
      if (f == 0) continue;
      if (f >= need && (fit == hosts.size() || f < free.count(hosts[fit]))) fit = i;
      if (most == hosts.size() || f > free.count(hosts[most])) most = i;
    }
    OMNI_CHECK(most < hosts.size(), "placement: a kind has fewer free slots than its count");
    const std::size_t h = hosts[fit < hosts.size() ? fit : most];
    while (need > 0 && free.count(h) > 0) slots.push_back(free.take_lowest(h)), --need;
  }
}

}  // namespace

std::vector<std::vector<DeviceSlot>> place_jobs(const ClusterFacts& cluster,
                                                const std::vector<std::vector<DeviceSlot>>& current,
                                                const std::vector<std::vector<int>>& counts,
                                                const std::vector<std::size_t>& order, Placement placement) {
  const std::size_t jobs = counts.size();
  OMNI_CHECK(current.size() == jobs && order.size() == jobs, "place_jobs: one entry per job");
  const std::vector<std::string> kinds = cluster.kinds();
  std::vector<std::vector<std::size_t>> hosts_of_kind(kinds.size());
  std::vector<std::size_t> kind_of_host;
  for (std::size_t h = 0; h < cluster.hosts.size(); ++h) {
    const auto k =
        static_cast<std::size_t>(std::lower_bound(kinds.begin(), kinds.end(), cluster.hosts[h].kind) - kinds.begin());
    hosts_of_kind[k].push_back(h);
    kind_of_host.push_back(k);
  }
  FreeSlots free(cluster);
  std::vector<std::vector<DeviceSlot>> out(jobs);
  // Every job keeps what it can of its current slots, before any job takes new ones.
  for (std::size_t j = 0; j < jobs; ++j) {
    OMNI_CHECK(counts[j].size() == kinds.size(), "place_jobs: one count per kind");
    const std::map<std::size_t, int> mine = on_host(current[j]);
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      std::vector<DeviceSlot> held;
      for (const DeviceSlot& s : current[j]) {
        if (kind_of_host[s.host] == k) held.push_back(s);
      }
      // Keep those on the hosts holding most of the job (pack) or fewest (spread); then by slot.
      std::stable_sort(held.begin(), held.end(), [&](const DeviceSlot& a, const DeviceSlot& b) {
        const int na = mine.at(a.host), nb = mine.at(b.host);
        if (na != nb) return placement == Placement::kPack ? na > nb : na < nb;
        return a < b;
      });
      held.resize(std::min(held.size(), static_cast<std::size_t>(counts[j][k])));
      for (const DeviceSlot& s : held) {
        free.take(s);
        out[j].push_back(s);
      }
    }
  }
  std::vector<bool> seen(jobs, false);
  for (std::size_t j : order) {
    OMNI_CHECK(j < jobs && !seen[j], "place_jobs: order must name every job once");
    seen[j] = true;
    std::vector<int> have(kinds.size(), 0);
    for (const DeviceSlot& s : out[j]) ++have[kind_of_host[s.host]];
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      place_kind(free, hosts_of_kind[k], counts[j][k] - have[k], placement, out[j]);
    }
    std::sort(out[j].begin(), out[j].end());
  }
  return out;
}

}  // namespace omnilearn::scheduler
