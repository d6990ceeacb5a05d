#include "omnilearn/scheduler/placement.h"

#include <algorithm>
#include <map>

#include "omnilearn/base/check.h"

namespace omnilearn::scheduler {
namespace {

// Which slots of every host are free, in two flat arrays (one allocation per round, however many hosts).
struct FreeSlots {
  std::vector<std::size_t> first;  // per host: its first slot's index in `taken`; one more entry at the end
  std::vector<char> taken;         // per slot of the cluster
  std::vector<int> left;           // per host: free slots

  explicit FreeSlots(const ClusterFacts& cluster) {
    first.reserve(cluster.hosts.size() + 1);
    first.push_back(0);
    for (const HostFacts& h : cluster.hosts) {
      first.push_back(first.back() + static_cast<std::size_t>(h.slots));
      left.push_back(h.slots);
    }
    taken.assign(first.back(), 0);
  }
  void take(const DeviceSlot& s) {
    const std::size_t host_slots = first[s.host + 1] - first[s.host];
    OMNI_CHECK(s.slot >= 0 && static_cast<std::size_t>(s.slot) < host_slots &&
                   taken[first[s.host] + static_cast<std::size_t>(s.slot)] == 0,
               "placement: a slot was taken twice");
    taken[first[s.host] + static_cast<std::size_t>(s.slot)] = 1;
    --left[s.host];
  }
  // The host's lowest free slot, taken (the host must have one).
  DeviceSlot take_lowest(std::size_t host) {
    std::size_t i = first[host];
    while (taken[i] != 0) ++i;
    taken[i] = 1;
    --left[host];
    return DeviceSlot{host, static_cast<int>(i - first[host])};
  }
  int count(std::size_t host) const { return left[host]; }
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
  if (need <= 0) return;  // nothing to place: no scan of the kind's hosts (a job that keeps its devices)
  std::map<std::size_t, int> mine = on_host(slots);
  const auto held_on = [&](std::size_t h) {  // the job's slots on host h, without adding h to `mine`
    const auto it = mine.find(h);
    return it == mine.end() ? 0 : it->second;
  };
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
        if (held_on(h) < held_on(b) || (held_on(h) == held_on(b) && free.count(h) > free.count(b))) best = i;
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
    if (held_on(h) > 0 && free.count(h) > 0) already.push_back(h);
  }
  std::stable_sort(already.begin(), already.end(),
                   [&](std::size_t a, std::size_t b) { return held_on(a) > held_on(b); });
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
  const std::vector<std::size_t> kind_of_host = cluster.kind_of_hosts(kinds);
  std::vector<std::vector<std::size_t>> hosts_of_kind(kinds.size());
  for (std::size_t h = 0; h < cluster.hosts.size(); ++h) hosts_of_kind[kind_of_host[h]].push_back(h);
  FreeSlots free(cluster);
  std::vector<std::vector<DeviceSlot>> out(jobs);
  // Every job keeps what it can of its current slots, before any job takes new ones.
  std::vector<int> held_of_kind(kinds.size());
  for (std::size_t j = 0; j < jobs; ++j) {
    OMNI_CHECK(counts[j].size() == kinds.size(), "place_jobs: one count per kind");
    std::fill(held_of_kind.begin(), held_of_kind.end(), 0);
    for (const DeviceSlot& s : current[j]) ++held_of_kind[kind_of_host[s.host]];
    bool keeps_all = true;
    for (std::size_t k = 0; k < kinds.size(); ++k) keeps_all = keeps_all && held_of_kind[k] <= counts[j][k];
    if (keeps_all) {  // no choice of which to keep (most jobs, most rounds)
      for (const DeviceSlot& s : current[j]) free.take(s);
      out[j] = current[j];
      continue;
    }
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
