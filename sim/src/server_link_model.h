// FairShareLink: one direction of the parameter server's link, shared among the flows crossing it as SimGrid's
// CM02 max-min solver shares a link, computed in closed form instead of flow by flow. ServerLinkSpec says when a
// star's server link is the only resource its pushes and pulls share, and what each worker's flows look like there.
// No SimGrid here. Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <tuple>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

// Flows of one class share their bound and their weight. CM02 gives a flow `level / penalty` bytes/s, where the
// level is the link's max-min fair level, unless its bound is lower.
struct FlowClass {
  double cap_Bps = 0.0;  // the flow's own bound: its route's other links, TCP's window (> 0)
  double penalty = 1.0;  // CM02's sharing penalty: the route's latency, or 1 when that is 0 (> 0)
};

// A link of `capacity_Bps` shared max-min fairly (weights 1 / penalty, each flow bounded by its class's cap). A
// flow joins at a given time (after its latency) and completes when its bytes have crossed. Each class keeps a
// virtual clock: the bytes x penalty that each of its flows has received, so a flow completes when its class's
// clock reaches the clock at its join plus its bytes x penalty, and all flows of a class progress together. An
// event (a join or a completion) costs O(K + log n) for K flow classes and n flows.
class FairShareLink {
 public:
  // Errors: capacity_Bps or a class's cap or penalty not > 0, no classes.
  static Result<FairShareLink> create(double capacity_Bps, const std::vector<FlowClass>& classes);

  // Flow `id` of class `flow_class` (< the number of classes), carrying `bytes` (>= 0), joins at `join_s` (a time
  // before the link's clock counts as now).
  void add(std::int64_t id, std::size_t flow_class, double bytes, Seconds join_s);
  // The time of the next join or completion; +infinity when the link carries nothing and nothing is to join.
  Seconds next_event_s() const;
  // Moves the link's clock to `t` (>= its current time), processing every join and completion up to `t` in time
  // order; appends the flows that completed to `finished`, in completion order (ties: by class, then by order of
  // adding).
  void advance(Seconds t, std::vector<std::int64_t>& finished);

 private:
  using Tag = std::tuple<double, std::uint64_t, std::int64_t>;  // (virtual finish, order of adding, id)
  using MinHeap = std::priority_queue<Tag, std::vector<Tag>, std::greater<>>;
  struct Class {
    FlowClass spec;
    double threshold = 0.0;  // cap x penalty: the level above which this class's flows are capped
    double clock = 0.0;      // virtual clock: bytes x penalty received by each of its flows
    double rate = 0.0;       // the clock's speed: min(threshold, level)
    MinHeap finishes;
  };
  struct Joining {
    Seconds join_s;
    std::uint64_t order;
    std::int64_t id;
    std::size_t flow_class;
    double bytes;
    bool operator>(const Joining& o) const { return std::tie(join_s, order) > std::tie(o.join_s, o.order); }
  };

  FairShareLink(double capacity_Bps, const std::vector<FlowClass>& classes);
  // The next event: its time and the class completing (classes_.size() for a join).
  std::pair<Seconds, std::size_t> next_event() const;
  void move_clocks_to(Seconds t);
  void share();  // the max-min level and each class's clock rate, after a join or a completion

  double capacity_Bps_;
  std::vector<Class> classes_;
  std::vector<std::size_t> by_threshold_;  // class indices, thresholds ascending
  std::priority_queue<Joining, std::vector<Joining>, std::greater<>> joining_;
  Seconds now_s_ = 0.0;
  std::uint64_t added_ = 0;
};

// The analytic view of a star's parameter-server link: its capacity, and for each worker the class of its pushes
// and pulls and the route latency each pays before joining. A pull's class takes the push route's latency as its
// penalty and TCP bound: SimGrid sums the same latencies the other way, which can differ in the last bit.
struct ServerLinkSpec {
  double server_Bps = 0.0;
  std::vector<FlowClass> classes;
  std::vector<std::size_t> worker_class;  // indexed by WorkerId
  std::vector<Seconds> push_latency_s;    // worker to server: worker, backbone, server links
  std::vector<Seconds> pull_latency_s;    // server to worker: the same links, summed the other way
};

// The spec for `cluster`, when its server link is the only resource the ASP pushes and pulls share: a star whose
// backbone carries at least min(2 x the server's bandwidth, the sum of the workers' bounds), so that it can never
// saturate. `tcp_gamma` is SimGrid's network/TCP-gamma (CM02 bounds a flow by tcp_gamma / (2 x route latency)).
// Nullopt otherwise: the pushes and pulls are then SimGrid flows.
std::optional<ServerLinkSpec> server_link_spec(const scenarios::ClusterSpec& cluster, double tcp_gamma);

}  // namespace omnilearn::sim
