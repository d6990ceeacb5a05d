#include "server_link_model.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "omnilearn/base/check.h"

namespace omnilearn::sim {
namespace {

constexpr Seconds kNever = std::numeric_limits<double>::infinity();

}  // namespace

Result<FairShareLink> FairShareLink::create(double capacity_Bps, const std::vector<FlowClass>& classes) {
  if (!(capacity_Bps > 0.0)) return Status::invalid_argument("FairShareLink: capacity_Bps must be > 0");
  if (classes.empty()) return Status::invalid_argument("FairShareLink: at least one flow class is required");
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (!(classes[i].cap_Bps > 0.0) || !(classes[i].penalty > 0.0)) {
      return Status::invalid_argument("FairShareLink: flow class " + std::to_string(i) +
                                      ": cap_Bps and penalty must be > 0");
    }
  }
  return FairShareLink(capacity_Bps, classes);
}

FairShareLink::FairShareLink(double capacity_Bps, const std::vector<FlowClass>& classes)
    : capacity_Bps_(capacity_Bps), classes_(classes.size()), by_threshold_(classes.size()) {
  for (std::size_t i = 0; i < classes.size(); ++i) {
    classes_[i].spec = classes[i];
    classes_[i].threshold = classes[i].cap_Bps * classes[i].penalty;
  }
  std::iota(by_threshold_.begin(), by_threshold_.end(), std::size_t{0});
  std::stable_sort(by_threshold_.begin(), by_threshold_.end(),
                   [this](std::size_t a, std::size_t b) { return classes_[a].threshold < classes_[b].threshold; });
}

void FairShareLink::add(std::int64_t id, std::size_t flow_class, double bytes, Seconds join_s) {
  OMNI_CHECK(flow_class < classes_.size(), "FairShareLink::add: no such flow class");
  OMNI_CHECK(bytes >= 0.0, "FairShareLink::add: negative bytes");
  joining_.push(Joining{std::max(join_s, now_s_), added_++, id, flow_class, bytes});
}

std::pair<Seconds, std::size_t> FairShareLink::next_event() const {
  std::pair<Seconds, std::size_t> next{kNever, classes_.size()};
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const Class& c = classes_[i];
    if (c.finishes.empty() || !(c.rate > 0.0)) continue;
    const Seconds t = now_s_ + std::max(0.0, std::get<0>(c.finishes.top()) - c.clock) / c.rate;
    if (t < next.first) next = {t, i};
  }
  // A completion goes before a join at the same time, as the completed flow has left when the next one joins.
  if (!joining_.empty() && joining_.top().join_s < next.first) next = {joining_.top().join_s, classes_.size()};
  return next;
}

Seconds FairShareLink::next_event_s() const { return next_event().first; }

void FairShareLink::move_clocks_to(Seconds t) {
  const Seconds dt = t - now_s_;
  if (dt > 0.0) {
    for (Class& c : classes_) {
      if (!c.finishes.empty()) c.clock += c.rate * dt;
    }
    now_s_ = t;
  }
}

void FairShareLink::advance(Seconds t, std::vector<std::int64_t>& finished) {
  while (true) {
    const auto [at, who] = next_event();
    if (!(at <= t)) break;
    move_clocks_to(at);
    if (who < classes_.size()) {
      Class& c = classes_[who];
      c.clock = std::get<0>(c.finishes.top());  // exactly its finish: rounding must not leave it a byte short
      while (!c.finishes.empty() && std::get<0>(c.finishes.top()) <= c.clock) {
        finished.push_back(std::get<2>(c.finishes.top()));
        c.finishes.pop();
      }
      if (c.finishes.empty()) c.clock = 0.0;  // an idle class restarts its clock: it stays small, so precise
    } else {
      while (!joining_.empty() && joining_.top().join_s <= at) {
        const Joining& j = joining_.top();
        Class& c = classes_[j.flow_class];
        c.finishes.emplace(c.clock + j.bytes * c.spec.penalty, j.order, j.id);
        joining_.pop();
      }
    }
    share();
  }
  move_clocks_to(t);
}

void FairShareLink::share() {
  // Water-filling in threshold order: a class whose threshold is under the level its unbounded peers would get is
  // held at its cap (CM02's solver saturates such a bounded variable first); the rest share what is left.
  double weight = 0.0;  // sum of 1 / penalty over the flows not yet held at their cap
  for (const Class& c : classes_) weight += static_cast<double>(c.finishes.size()) / c.spec.penalty;
  double free_Bps = capacity_Bps_;
  std::size_t first_free = by_threshold_.size();
  for (std::size_t pos = 0; pos < by_threshold_.size(); ++pos) {
    const Class& c = classes_[by_threshold_[pos]];
    if (c.finishes.empty()) continue;
    if (c.threshold * weight > free_Bps) {
      first_free = pos;
      break;
    }
    const auto n = static_cast<double>(c.finishes.size());
    free_Bps -= n * c.spec.cap_Bps;
    weight -= n / c.spec.penalty;
  }
  double level = kNever;
  if (first_free < by_threshold_.size()) {
    // Summed afresh rather than by subtraction, which could leave rounding in a small remainder.
    double capped_Bps = 0.0, free_weight = 0.0;
    for (std::size_t pos = 0; pos < by_threshold_.size(); ++pos) {
      const Class& c = classes_[by_threshold_[pos]];
      const auto n = static_cast<double>(c.finishes.size());
      if (pos < first_free) {
        capped_Bps += n * c.spec.cap_Bps;
      } else {
        free_weight += n / c.spec.penalty;
      }
    }
    level = std::max(0.0, capacity_Bps_ - capped_Bps) / free_weight;
  }
  for (Class& c : classes_) c.rate = std::min(c.threshold, level);
}

std::optional<ServerLinkSpec> server_link_spec(const scenarios::ClusterSpec& cluster, double tcp_gamma) {
  if (cluster.topology != scenarios::Topology::kStar || cluster.workers.empty() || !(tcp_gamma > 0.0)) {
    return std::nullopt;
  }
  const scenarios::NodeSpec& ps = cluster.parameter_server;
  const double backbone_Bps = cluster.backbone_bandwidth_Bps;
  const Seconds backbone_s = cluster.backbone_latency_s;
  ServerLinkSpec spec;
  spec.server_Bps = ps.bandwidth_Bps;
  std::map<std::pair<double, double>, std::size_t> class_of;
  double caps_Bps = 0.0;
  for (const scenarios::NodeSpec& w : cluster.workers) {
    // As StarZone sums a route's latencies: the source's links up, then the destination's down.
    const Seconds push_s = w.latency_s + backbone_s + ps.latency_s;
    const Seconds pull_s = ps.latency_s + backbone_s + w.latency_s;
    // CM02: the route's narrowest link, then TCP's window over the round trip; the penalty is the latency.
    const double route_Bps = std::min({w.bandwidth_Bps, backbone_Bps, ps.bandwidth_Bps});
    const double cap_Bps = push_s > 0.0 ? std::min(route_Bps, tcp_gamma / (2.0 * push_s)) : route_Bps;
    const FlowClass flow{cap_Bps, push_s > 0.0 ? push_s : 1.0};
    const auto [it, added] = class_of.emplace(std::make_pair(flow.cap_Bps, flow.penalty), spec.classes.size());
    if (added) spec.classes.push_back(flow);
    spec.worker_class.push_back(it->second);
    spec.push_latency_s.push_back(push_s);
    spec.pull_latency_s.push_back(pull_s);
    caps_Bps += cap_Bps;
  }
  // Each worker has one flow at a time (a push or a pull): the pushes cross the server's link down, the pulls its
  // link up, and both the backbone, which can carry them all unless this fails.
  if (!(backbone_Bps >= std::min(2.0 * ps.bandwidth_Bps, caps_Bps))) return std::nullopt;
  return spec;
}

}  // namespace omnilearn::sim
