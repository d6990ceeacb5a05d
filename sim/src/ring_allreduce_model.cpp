#include "ring_allreduce_model.h"

#include <algorithm>
#include <map>

namespace omnilearn::sim {

std::vector<Seconds> max_min_flow_times(const std::vector<double>& caps, double backbone_Bps, double bytes) {
  // Flows with the same cap move at the same rate throughout, so they are handled as one group.
  struct Group {
    double cap = 0.0;
    double count = 0.0;
    double remaining = 0.0;
    Seconds finish_s = 0.0;
    bool done = false;
  };
  std::map<double, Group> groups;  // ascending cap
  for (double c : caps) {
    Group& g = groups[c];
    g.cap = c, g.count += 1.0, g.remaining = bytes;
  }
  Seconds now = 0.0;
  while (true) {
    // Water-filling: the smallest caps are met in full while the backbone allows, the rest share what is left.
    double capacity = backbone_Bps;
    double active = 0.0;
    for (const auto& [cap, g] : groups) active += g.done ? 0.0 : g.count;
    if (active == 0.0) break;
    std::map<double, double> rate;
    for (auto& [cap, g] : groups) {
      if (g.done) continue;
      const double fair = capacity / active;
      rate[cap] = std::min(cap, fair);
      capacity -= rate[cap] * g.count;
      active -= g.count;
    }
    double dt = -1.0;
    for (auto& [cap, g] : groups) {
      if (!g.done && (dt < 0.0 || g.remaining / rate[cap] < dt)) dt = g.remaining / rate[cap];
    }
    now += dt;
    for (auto& [cap, g] : groups) {
      if (g.done) continue;
      g.remaining -= rate[cap] * dt;
      if (g.remaining <= bytes * 1e-12) g.done = true, g.finish_s = now;
    }
  }
  std::vector<Seconds> out;
  out.reserve(caps.size());
  for (double c : caps) out.push_back(groups[c].finish_s);
  return out;
}

Seconds quota_ring_wait_s(const std::vector<double>& shares, Seconds period_s, std::size_t ring_steps) {
  constexpr Seconds kMinQuotaS = 1e-3;  // the CFS minimum quota
  if (!(period_s > 0.0)) return 0.0;
  Seconds worst = 0.0;
  for (double s : shares) {
    if (!(s > 0.0) || s >= 1.0) continue;
    worst = std::max(worst, 0.5 * (1.0 - s) * std::max(period_s, kMinQuotaS / s));
  }
  return static_cast<double>(ring_steps) * worst;
}

}  // namespace omnilearn::sim
