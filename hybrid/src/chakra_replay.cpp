#include "omnilearn/hybrid/chakra_replay.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace omnilearn::hybrid {
namespace {

using traces::ChakraCollective;
using traces::ChakraNode;
using traces::ChakraNodeType;
using traces::ChakraRank;

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// One node's replay state.
struct Slot {
  std::vector<std::size_t> dependents;  // indices in the same rank
  std::size_t waiting = 0;              // dependencies not yet ended
  std::size_t meeting = kNone;          // its send/receive pair or collective instance
  Seconds ready_s = 0.0;
  bool done = false;
};

// A send and its receive, or one collective instance: its members end together once all have arrived.
struct Meeting {
  std::vector<std::pair<std::size_t, std::size_t>> members;  // (rank, node index)
  std::size_t arrived = 0;
  Seconds latest_s = 0.0;
  Seconds cost_s = 0.0;
};

using Interval = std::pair<Seconds, Seconds>;

// The length of the union of `spans`.
Seconds union_length(std::vector<Interval> spans) {
  std::sort(spans.begin(), spans.end());
  Seconds total = 0.0;
  Seconds begin = 0.0;
  Seconds end = -1.0;
  for (const auto& [b, e] : spans) {
    if (b > end) {
      if (end > begin) total += end - begin;
      begin = b;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > begin) total += end - begin;
  return total;
}

Status check_link(const ChakraLink& link, const std::string& name) {
  if (!(link.bandwidth_bytes_per_s > 0.0) || !std::isfinite(link.bandwidth_bytes_per_s)) {
    return Status::invalid_argument(name + ".bandwidth_bytes_per_s: expected a finite number > 0, got " +
                                    std::to_string(link.bandwidth_bytes_per_s));
  }
  if (!(link.latency_s >= 0.0) || !std::isfinite(link.latency_s)) {
    return Status::invalid_argument(name + ".latency_s: expected a finite number >= 0, got " +
                                    std::to_string(link.latency_s));
  }
  return Status::ok();
}

// The ring cost of one collective (chakra_replay.h).
Seconds collective_cost(ChakraCollective kind, std::size_t ranks, double bytes, const ChakraLink& link) {
  if (ranks <= 1) return 0.0;
  const double n = static_cast<double>(ranks);
  const double transfer = bytes / link.bandwidth_bytes_per_s;
  const double rounds = std::ceil(std::log2(n));
  switch (kind) {
    case ChakraCollective::kAllReduce:
      return 2.0 * (n - 1.0) / n * transfer + 2.0 * (n - 1.0) * link.latency_s;
    case ChakraCollective::kBroadcast:
    case ChakraCollective::kReduce:
      return transfer + rounds * link.latency_s;
    case ChakraCollective::kBarrier:
      return rounds * link.latency_s;
    default:  // all-gather, reduce-scatter (both kinds), all-to-all, gather, scatter
      return (n - 1.0) / n * transfer + (n - 1.0) * link.latency_s;
  }
}

class Replayer {
 public:
  Replayer(const std::vector<ChakraRank>& ranks, const ChakraReplayOptions& options)
      : ranks_(ranks),
        options_(options),
        slots_(ranks.size()),
        ready_(ranks.size()),
        busy_(ranks.size(), false),
        compute_(ranks.size()),
        comm_(ranks.size()),
        pending_flag_(ranks.size(), false) {}

  Result<ChakraReplay> run();

 private:
  std::string node_name(std::size_t r, std::size_t i) const {
    const ChakraNode& n = ranks_[r].nodes[i];
    return "rank " + std::to_string(r) + " node " + std::to_string(i) + " (id " + std::to_string(n.id) + ", '" +
           n.name + "')";
  }
  const ChakraLink& link(std::size_t a, std::size_t b) const {
    const std::int64_t per = options_.network.ranks_per_node;
    const bool same = per > 0 && a / static_cast<std::size_t>(per) == b / static_cast<std::size_t>(per);
    return same ? options_.network.intra : options_.network.inter;
  }
  double speed(std::size_t r) const { return options_.speed.empty() ? 1.0 : options_.speed[r]; }

  Status build_graph();
  Status match_point_to_point();
  Status match_collectives();
  void on_ready(std::size_t r, std::size_t i, Seconds t);
  void on_end(std::size_t r, std::size_t i, Seconds t);
  void dispatch(Seconds t);
  Status deadlock() const;

  const std::vector<ChakraRank>& ranks_;
  const ChakraReplayOptions& options_;
  std::vector<std::vector<Slot>> slots_;
  std::vector<Meeting> meetings_;
  // Per rank: its ready compute nodes by (ready time, index), whether its stream runs one, its spans.
  std::vector<std::set<std::pair<Seconds, std::size_t>>> ready_;
  std::vector<bool> busy_;
  std::vector<std::vector<Interval>> compute_;
  std::vector<std::vector<Interval>> comm_;
  std::vector<std::size_t> pending_;  // ranks whose stream may start a node
  std::vector<bool> pending_flag_;
  // Node ends to come: (time, sequence, rank, index); the sequence keeps equal times in a fixed order.
  using Event = std::tuple<Seconds, std::uint64_t, std::size_t, std::size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t sequence_ = 0;
  std::size_t ended_ = 0;
};

Status Replayer::build_graph() {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const std::vector<ChakraNode>& nodes = ranks_[r].nodes;
    std::unordered_map<std::uint64_t, std::size_t> by_id;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!by_id.emplace(nodes[i].id, i).second) {
        return Status::invalid_argument(node_name(r, i) + ": id " + std::to_string(nodes[i].id) + " is not unique");
      }
    }
    slots_[r].resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      std::vector<std::size_t> deps;
      for (const auto* list : {&nodes[i].data_deps, &nodes[i].ctrl_deps}) {
        for (std::uint64_t d : *list) {
          const auto it = by_id.find(d);
          if (it == by_id.end()) {
            return Status::invalid_argument(node_name(r, i) + ": depends on id " + std::to_string(d) +
                                            ", which no node of the rank has");
          }
          deps.push_back(it->second);
        }
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      slots_[r][i].waiting = deps.size();
      for (std::size_t d : deps) slots_[r][d].dependents.push_back(i);
    }
  }
  return Status::ok();
}

Status Replayer::match_point_to_point() {
  // (sender, receiver, tag) -> the sends on the sender and the receives on the receiver, in file order.
  std::map<std::tuple<std::size_t, std::size_t, std::int64_t>,
           std::pair<std::vector<std::size_t>, std::vector<std::size_t>>>
      channels;
  const auto n = static_cast<std::int64_t>(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    for (std::size_t i = 0; i < ranks_[r].nodes.size(); ++i) {
      const ChakraNode& node = ranks_[r].nodes[i];
      const bool send = node.type == ChakraNodeType::kSend;
      if (!send && node.type != ChakraNodeType::kRecv) continue;
      const std::optional<std::int64_t>& peer = send ? node.comm_dst : node.comm_src;
      const char* field = send ? "comm_dst" : "comm_src";
      if (!peer || *peer < 0 || *peer >= n || static_cast<std::size_t>(*peer) == r) {
        return Status::invalid_argument(node_name(r, i) + ": " + field + " " +
                                        (peer ? std::to_string(*peer) : "absent") +
                                        " is not another rank of the trace (0.." + std::to_string(n - 1) + ")");
      }
      const auto p = static_cast<std::size_t>(*peer);
      const std::int64_t tag = node.comm_tag.value_or(0);
      auto& channel = channels[send ? std::make_tuple(r, p, tag) : std::make_tuple(p, r, tag)];
      (send ? channel.first : channel.second).push_back(i);
    }
  }
  for (const auto& [key, channel] : channels) {
    const auto& [src, dst, tag] = key;
    const auto& [sends, recvs] = channel;
    if (sends.size() != recvs.size()) {
      const bool extra_send = sends.size() > recvs.size();
      const std::size_t k = std::min(sends.size(), recvs.size());
      return Status::invalid_argument(
          (extra_send ? node_name(src, sends[k]) : node_name(dst, recvs[k])) + ": " +
          (extra_send ? "send to rank " + std::to_string(dst) : "receive from rank " + std::to_string(src)) +
          " with tag " + std::to_string(tag) + " has no match: rank " + std::to_string(src) + " sends " +
          std::to_string(sends.size()) + " and rank " + std::to_string(dst) + " receives " +
          std::to_string(recvs.size()) + " on that channel");
    }
    for (std::size_t k = 0; k < sends.size(); ++k) {
      Meeting m;
      m.members = {{src, sends[k]}, {dst, recvs[k]}};
      const double bytes = static_cast<double>(ranks_[src].nodes[sends[k]].comm_size.value_or(0));
      const ChakraLink& l = link(src, dst);
      m.cost_s = l.latency_s + bytes / l.bandwidth_bytes_per_s;
      for (const auto& [r, i] : m.members) slots_[r][i].meeting = meetings_.size();
      meetings_.push_back(std::move(m));
    }
  }
  return Status::ok();
}

Status Replayer::match_collectives() {
  // process group -> rank -> its collectives in file order; the unnamed group holds every rank.
  std::map<std::string, std::map<std::size_t, std::vector<std::size_t>>> groups;
  for (std::size_t r = 0; r < ranks_.size(); ++r) groups[""][r];
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    for (std::size_t i = 0; i < ranks_[r].nodes.size(); ++i) {
      const ChakraNode& node = ranks_[r].nodes[i];
      if (node.type == ChakraNodeType::kCollective) groups[node.pg_name][r].push_back(i);
    }
  }
  for (const auto& [group, members] : groups) {
    const auto& [first_rank, first] = *members.begin();
    for (const auto& [r, list] : members) {
      if (list.size() == first.size()) continue;
      const bool longer = list.size() > first.size();
      const std::size_t who = longer ? r : first_rank;
      const std::size_t other = longer ? first_rank : r;
      const std::size_t k = std::min(list.size(), first.size());
      return Status::invalid_argument(node_name(who, (longer ? list : first)[k]) + ": collective " +
                                      std::to_string(k + 1) + " of process group '" + group +
                                      "' has no counterpart on rank " + std::to_string(other) + " (" +
                                      std::to_string(list.size()) + " on rank " + std::to_string(r) + ", " +
                                      std::to_string(first.size()) + " on rank " + std::to_string(first_rank) + ")");
    }
    for (std::size_t k = 0; k < first.size(); ++k) {
      Meeting m;
      double bytes = 0.0;
      bool one_node = options_.network.ranks_per_node > 0;
      std::optional<ChakraCollective> kind;
      for (const auto& [r, list] : members) {
        const ChakraNode& node = ranks_[r].nodes[list[k]];
        if (!node.comm_type)
          return Status::invalid_argument(node_name(r, list[k]) + ": a collective without comm_type");
        if (!kind) kind = node.comm_type;
        if (*node.comm_type != *kind) {
          return Status::invalid_argument(node_name(r, list[k]) + ": collective " + std::to_string(k + 1) +
                                          " of process group '" + group + "' is " + to_string(*node.comm_type) +
                                          " here but " + to_string(*kind) + " on rank " + std::to_string(first_rank));
        }
        bytes = std::max(bytes, static_cast<double>(node.comm_size.value_or(0)));
        one_node = one_node && &link(first_rank, r) == &options_.network.intra;
        m.members.emplace_back(r, list[k]);
      }
      const ChakraLink& l = one_node ? options_.network.intra : options_.network.inter;
      m.cost_s = collective_cost(*kind, members.size(), bytes, l);
      for (const auto& [r, i] : m.members) slots_[r][i].meeting = meetings_.size();
      meetings_.push_back(std::move(m));
    }
  }
  return Status::ok();
}

void Replayer::on_ready(std::size_t r, std::size_t i, Seconds t) {
  Slot& s = slots_[r][i];
  s.ready_s = t;
  if (ranks_[r].nodes[i].type == ChakraNodeType::kCompute) {
    ready_[r].emplace(t, i);
    if (!pending_flag_[r]) {
      pending_flag_[r] = true;
      pending_.push_back(r);
    }
    return;
  }
  if (s.meeting == kNone) {  // metadata and memory nodes
    events_.emplace(t, sequence_++, r, i);
    return;
  }
  Meeting& m = meetings_[s.meeting];
  m.latest_s = std::max(m.latest_s, t);
  if (++m.arrived < m.members.size()) return;
  const Seconds end = m.latest_s + m.cost_s;
  for (const auto& [mr, mi] : m.members) {
    events_.emplace(end, sequence_++, mr, mi);
    comm_[mr].emplace_back(m.latest_s, end);
  }
}

void Replayer::on_end(std::size_t r, std::size_t i, Seconds t) {
  slots_[r][i].done = true;
  ++ended_;
  if (ranks_[r].nodes[i].type == ChakraNodeType::kCompute) {
    busy_[r] = false;
    if (!pending_flag_[r]) {
      pending_flag_[r] = true;
      pending_.push_back(r);
    }
  }
  for (std::size_t d : slots_[r][i].dependents) {
    if (--slots_[r][d].waiting == 0) on_ready(r, d, t);
  }
}

void Replayer::dispatch(Seconds t) {
  for (std::size_t r : pending_) {
    pending_flag_[r] = false;
    if (busy_[r] || ready_[r].empty()) continue;
    const std::size_t i = ready_[r].begin()->second;
    ready_[r].erase(ready_[r].begin());
    busy_[r] = true;
    const Seconds end = t + static_cast<double>(ranks_[r].nodes[i].duration_micros) * 1e-6 / speed(r);
    compute_[r].emplace_back(t, end);
    events_.emplace(end, sequence_++, r, i);
  }
  pending_.clear();
}

Status Replayer::deadlock() const {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    for (std::size_t i = 0; i < slots_[r].size(); ++i) {
      const Slot& s = slots_[r][i];
      if (s.done || s.waiting != 0 || s.meeting == kNone) continue;
      std::string missing;
      for (const auto& [mr, mi] : meetings_[s.meeting].members) {
        if (slots_[mr][mi].waiting != 0) {
          missing = node_name(mr, mi);
          break;
        }
      }
      return Status::invalid_argument("deadlock: " + node_name(r, i) + " (" + to_string(ranks_[r].nodes[i].type) +
                                      ") waits for " + missing + ", which is never reached");
    }
  }
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    for (std::size_t i = 0; i < slots_[r].size(); ++i) {
      if (!slots_[r][i].done) {
        return Status::invalid_argument("deadlock: " + node_name(r, i) + " never becomes ready (a dependency cycle)");
      }
    }
  }
  return Status::internal("replay_chakra: nodes left over without a waiting one");
}

Result<ChakraReplay> Replayer::run() {
  if (!options_.speed.empty() && options_.speed.size() != ranks_.size()) {
    return Status::invalid_argument("speed: " + std::to_string(options_.speed.size()) + " factors for " +
                                    std::to_string(ranks_.size()) + " ranks");
  }
  for (std::size_t r = 0; r < options_.speed.size(); ++r) {
    if (!(options_.speed[r] > 0.0) || !std::isfinite(options_.speed[r])) {
      return Status::invalid_argument("speed of rank " + std::to_string(r) + ": expected a finite number > 0, got " +
                                      std::to_string(options_.speed[r]));
    }
  }
  OMNI_RETURN_IF_ERROR(check_link(options_.network.inter, "network.inter"));
  OMNI_RETURN_IF_ERROR(check_link(options_.network.intra, "network.intra"));
  if (options_.network.ranks_per_node < 0) {
    return Status::invalid_argument("network.ranks_per_node: expected >= 0, got " +
                                    std::to_string(options_.network.ranks_per_node));
  }
  OMNI_RETURN_IF_ERROR(build_graph());
  OMNI_RETURN_IF_ERROR(match_point_to_point());
  OMNI_RETURN_IF_ERROR(match_collectives());
  std::size_t total = 0;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    total += slots_[r].size();
    for (std::size_t i = 0; i < slots_[r].size(); ++i) {
      if (slots_[r][i].waiting == 0) on_ready(r, i, 0.0);
    }
  }
  dispatch(0.0);
  while (!events_.empty()) {
    const Seconds t = std::get<0>(events_.top());
    while (!events_.empty() && std::get<0>(events_.top()) == t) {
      const auto [time, seq, r, i] = events_.top();
      events_.pop();
      on_end(r, i, time);
    }
    dispatch(t);
  }
  if (ended_ != total) return deadlock();

  ChakraReplay out;
  out.ranks.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    ChakraRankTimes& times = out.ranks[r];
    for (const auto& [b, e] : compute_[r]) {
      times.compute_s += e - b;
      times.finish_s = std::max(times.finish_s, e);
    }
    for (const auto& [b, e] : comm_[r]) times.finish_s = std::max(times.finish_s, e);
    for (const Slot& s : slots_[r]) times.finish_s = std::max(times.finish_s, s.ready_s);  // instant nodes
    times.comm_s = union_length(comm_[r]);
    std::vector<Interval> all = compute_[r];
    all.insert(all.end(), comm_[r].begin(), comm_[r].end());
    times.idle_s = std::max(0.0, times.finish_s - union_length(std::move(all)));
    out.makespan_s = std::max(out.makespan_s, times.finish_s);
  }
  return out;
}

}  // namespace

Result<ChakraReplay> replay_chakra(const std::vector<traces::ChakraRank>& ranks, const ChakraReplayOptions& options) {
  return Replayer(ranks, options).run();
}

}  // namespace omnilearn::hybrid
