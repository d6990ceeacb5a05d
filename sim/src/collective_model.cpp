#include "collective_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace omnilearn::sim {
namespace {

using scenarios::AllreduceAlgorithm;

// One aggregated flow per member of a ring over `members` (indices into the participants) to its successor, `bytes`
// each.
void add_ring(CollectivePhase& phase, const std::vector<std::size_t>& members, double bytes) {
  const std::size_t n = members.size();
  if (n < 2) return;
  for (std::size_t i = 0; i < n; ++i) phase.flows.push_back({members[i], members[(i + 1) % n], bytes});
}

// NCCL's binary tree (ncclGetBtree): rank 0 is the root, odd ranks are leaves. The parent of each rank, -1 at the root.
std::vector<long> btree_parents(std::size_t p) {
  std::vector<long> parent(p, -1);
  const long n = static_cast<long>(p);
  for (long rank = 1; rank < n; ++rank) {
    long bit = 1;
    for (; bit < n; bit <<= 1) {
      if (bit & rank) break;
    }
    long up = (rank ^ bit) | (bit << 1);
    if (up >= n) up = rank ^ bit;
    parent[static_cast<std::size_t>(rank)] = up;
  }
  return parent;
}

// NCCL's double binary tree (ncclGetDtree): the btree, and the btree over the ranks mirrored (even count) or shifted
// by one (odd count), so that a rank is an inner node of at most one of them.
std::vector<std::vector<long>> dtree_parents(std::size_t p) {
  const std::vector<long> t1 = btree_parents(p);
  std::vector<long> t2(p, -1);
  const long n = static_cast<long>(p);
  for (long rank = 0; rank < n; ++rank) {
    const long virt = n % 2 == 1 ? (rank - 1 + n) % n : n - 1 - rank;
    const long up = t1[static_cast<std::size_t>(virt)];
    if (up < 0) continue;
    t2[static_cast<std::size_t>(rank)] = n % 2 == 1 ? (up + 1) % n : n - 1 - up;
  }
  return {t1, t2};
}

std::size_t tree_depth(const std::vector<long>& parent) {
  std::size_t depth = 0;
  for (std::size_t v = 0; v < parent.size(); ++v) {
    std::size_t d = 0;
    for (long u = parent[v]; u >= 0; u = parent[static_cast<std::size_t>(u)]) ++d;
    depth = std::max(depth, d);
  }
  return depth;
}

// Chunks a rank sends or receives in one pipeline stage of the double tree, at most.
double dtree_stage_load(const std::vector<std::vector<long>>& trees, std::size_t p) {
  std::vector<double> sent(p, 0.0), received(p, 0.0);
  for (const auto& parent : trees) {
    for (std::size_t v = 0; v < p; ++v) {
      if (parent[v] < 0) continue;
      sent[v] += 1.0;
      received[static_cast<std::size_t>(parent[v])] += 1.0;
    }
  }
  double load = 0.0;
  for (std::size_t v = 0; v < p; ++v) load = std::max({load, sent[v], received[v]});
  return load;
}

// The double tree's time from its depth and stage load (dtree_stage_load).
Seconds dtree_time_s(double depth, double load, double bytes, Seconds alpha_s, double bandwidth_Bps,
                     std::int64_t chunks) {
  const double c = static_cast<double>(chunks);
  return 2.0 * (depth + c - 1.0) * (alpha_s + load * bytes / 2.0 / c / bandwidth_Bps);
}

Seconds dtree_time_s(std::size_t p, double bytes, Seconds alpha_s, double bandwidth_Bps, std::int64_t chunks) {
  const auto trees = dtree_parents(p);
  const double depth = static_cast<double>(std::max(tree_depth(trees[0]), tree_depth(trees[1])));
  return dtree_time_s(depth, dtree_stage_load(trees, p), bytes, alpha_s, bandwidth_Bps, chunks);
}

std::size_t floor_pow2(std::size_t p) {
  std::size_t q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

std::vector<std::size_t> shard_positions(std::size_t p, std::int64_t shards) {
  const std::size_t s = std::min<std::size_t>(p, static_cast<std::size_t>(std::max<std::int64_t>(shards, 1)));
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < s; ++j) out.push_back(j * p / s);
  return out;
}

}  // namespace

std::int64_t tree_chunks(const scenarios::AllreduceSpec& spec, std::size_t p, double bytes, Seconds alpha_s,
                         double bandwidth_Bps) {
  if (spec.chunks > 0) return spec.chunks;
  if (spec.algorithm != AllreduceAlgorithm::kDoubleBinaryTree || p < 2 || !(bytes > 0.0) || !(bandwidth_Bps > 0.0)) {
    return 1;
  }
  const auto trees = dtree_parents(p);
  const double depth = static_cast<double>(std::max(tree_depth(trees[0]), tree_depth(trees[1])));
  const double load = dtree_stage_load(trees, p);
  std::int64_t best = 1;
  Seconds best_s = std::numeric_limits<double>::infinity();
  for (std::int64_t c = 1; c <= 1024; ++c) {
    const Seconds t = dtree_time_s(depth, load, bytes, alpha_s, bandwidth_Bps, c);
    if (t < best_s * (1.0 - 1e-12)) best = c, best_s = t;
  }
  return best;
}

namespace {

void ring_schedule(std::size_t p, double bytes, CollectiveSchedule& out) {
  const double pd = static_cast<double>(p);
  CollectivePhase phase;
  std::vector<std::size_t> all(p);
  for (std::size_t i = 0; i < p; ++i) all[i] = i;
  add_ring(phase, all, 2.0 * (pd - 1.0) / pd * bytes);
  phase.extra_hops = 2.0 * (pd - 1.0) - 1.0;
  out.phases.push_back(std::move(phase));
}

// Intra-node reduce-scatter, inter-node rings of the same-rank members, intra-node all-gather.
void hierarchical_ring_schedule(const scenarios::AllreduceSpec& spec, const std::vector<WorkerId>& participants,
                                double bytes, CollectiveSchedule& out) {
  const std::size_t p = participants.size();
  const auto per_node = static_cast<WorkerId>(std::max<std::int64_t>(spec.workers_per_node, 1));
  std::map<WorkerId, std::vector<std::size_t>> nodes;  // node id -> participant indices
  for (std::size_t i = 0; i < p; ++i) nodes[participants[i] / per_node].push_back(i);
  std::size_t widest = 0;
  for (const auto& [id, members] : nodes) widest = std::max(widest, members.size());
  const double n = static_cast<double>(widest);
  CollectivePhase intra;
  for (const auto& [id, members] : nodes) {
    const double g = static_cast<double>(members.size());
    add_ring(intra, members, (g - 1.0) / g * bytes);
  }
  intra.extra_hops = std::max(0.0, n - 2.0);
  CollectivePhase inter;
  double rings = 0.0;
  for (std::size_t r = 0; r < widest; ++r) {
    std::vector<std::size_t> ring;
    for (const auto& [id, members] : nodes) {
      if (r < members.size()) ring.push_back(members[r]);
    }
    const double m = static_cast<double>(ring.size());
    rings = std::max(rings, m);
    if (ring.size() > 1) add_ring(inter, ring, 2.0 * (m - 1.0) / m * bytes / n);
  }
  inter.extra_hops = std::max(0.0, 2.0 * (rings - 1.0) - 1.0);
  if (!intra.flows.empty()) out.phases.push_back(intra);
  if (!inter.flows.empty()) out.phases.push_back(std::move(inter));
  if (!intra.flows.empty()) out.phases.push_back(std::move(intra));  // the all-gather mirrors the reduce-scatter
}

void double_binary_tree_schedule(std::size_t p, double bytes, std::int64_t chunks, CollectiveSchedule& out) {
  const auto trees = dtree_parents(p);
  const double depth = static_cast<double>(std::max(tree_depth(trees[0]), tree_depth(trees[1])));
  const double c = static_cast<double>(std::max<std::int64_t>(chunks, 1));
  const double chunk = bytes / 2.0 / c;
  CollectivePhase reduce, broadcast;
  for (const auto& parent : trees) {
    for (std::size_t v = 0; v < p; ++v) {
      if (parent[v] < 0) continue;
      reduce.flows.push_back({v, static_cast<std::size_t>(parent[v]), chunk});
      broadcast.flows.push_back({static_cast<std::size_t>(parent[v]), v, chunk});
    }
  }
  reduce.repeat = broadcast.repeat = depth + c - 1.0;
  out.phases.push_back(std::move(reduce));
  out.phases.push_back(std::move(broadcast));
}

// Ranks beyond the largest power of two fold in first and get the result last.
void halving_doubling_schedule(std::size_t p, double bytes, CollectiveSchedule& out) {
  const std::size_t q = floor_pow2(p);
  CollectivePhase fold;
  for (std::size_t i = q; i < p; ++i) fold.flows.push_back({i, i - q, bytes});
  if (!fold.flows.empty()) out.phases.push_back(fold);
  std::vector<CollectivePhase> halving;
  for (std::size_t d = q / 2; d >= 1; d /= 2) {
    CollectivePhase step;
    const double share = bytes * static_cast<double>(d) / static_cast<double>(q);
    for (std::size_t i = 0; i < q; ++i) step.flows.push_back({i, i ^ d, share});
    halving.push_back(std::move(step));
  }
  for (const auto& step : halving) out.phases.push_back(step);
  for (auto it = halving.rbegin(); it != halving.rend(); ++it) out.phases.push_back(*it);
  if (!fold.flows.empty()) {
    for (auto& f : fold.flows) std::swap(f.src, f.dst);
    out.phases.push_back(std::move(fold));
  }
}

void parameter_server_schedule(const scenarios::AllreduceSpec& spec, std::size_t p, double bytes,
                               CollectiveSchedule& out) {
  const std::vector<std::size_t> shards = shard_positions(p, spec.shards);
  const double share = bytes / static_cast<double>(shards.size());
  CollectivePhase push, pull;
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t s : shards) {
      if (s == i) continue;
      push.flows.push_back({i, s, share});
      pull.flows.push_back({s, i, share});
    }
  }
  out.phases.push_back(std::move(push));
  out.phases.push_back(std::move(pull));
}

}  // namespace

CollectiveSchedule make_schedule(const scenarios::AllreduceSpec& spec, const std::vector<WorkerId>& participants,
                                 double bytes, std::int64_t chunks) {
  CollectiveSchedule out;
  const std::size_t p = participants.size();
  if (p < 2 || !(bytes > 0.0)) return out;
  switch (spec.algorithm) {
    case AllreduceAlgorithm::kRing: ring_schedule(p, bytes, out); break;
    case AllreduceAlgorithm::kHierarchicalRing: hierarchical_ring_schedule(spec, participants, bytes, out); break;
    case AllreduceAlgorithm::kDoubleBinaryTree: double_binary_tree_schedule(p, bytes, chunks, out); break;
    case AllreduceAlgorithm::kHalvingDoubling: halving_doubling_schedule(p, bytes, out); break;
    case AllreduceAlgorithm::kParameterServer: parameter_server_schedule(spec, p, bytes, out); break;
  }
  return out;
}

Seconds uniform_star_time_s(const CollectiveSchedule& schedule, std::size_t participants, Seconds alpha_s,
                            double bandwidth_Bps) {
  Seconds total = 0.0;
  std::vector<double> sent(participants), received(participants);
  for (const CollectivePhase& phase : schedule.phases) {
    std::fill(sent.begin(), sent.end(), 0.0);
    std::fill(received.begin(), received.end(), 0.0);
    double load = 0.0;
    for (const CollectiveFlow& f : phase.flows) {
      load = std::max({load, sent[f.src] += f.bytes, received[f.dst] += f.bytes});
    }
    total += phase.repeat * (alpha_s * (1.0 + phase.extra_hops) + load / bandwidth_Bps);
  }
  return total;
}

namespace {

// Max-min sharing of one backbone by flows of given caps and sizes (no other shared resource): when each flow ends.
// Flows of equal cap and size move alike, so they are handled as one group.
std::vector<Seconds> backbone_max_min(const std::vector<double>& caps, const std::vector<double>& bytes,
                                      double backbone_Bps) {
  struct Group {
    double cap, count, remaining;
    Seconds finish_s;
    bool done;
  };
  std::map<std::pair<double, double>, Group> groups;  // (cap, bytes), ascending cap
  for (std::size_t i = 0; i < caps.size(); ++i) {
    auto [it, added] = groups.try_emplace({caps[i], bytes[i]}, Group{caps[i], 0.0, bytes[i], 0.0, false});
    it->second.count += 1.0;
  }
  Seconds now = 0.0;
  while (true) {
    double active = 0.0;
    for (const auto& [key, g] : groups) active += g.done ? 0.0 : g.count;
    if (active == 0.0) break;
    // The water level L with sum count * min(cap, L) = backbone (infinite when every flow fits at its cap).
    double capacity = backbone_Bps, left = active, level = std::numeric_limits<double>::infinity();
    for (const auto& [key, g] : groups) {  // ascending cap
      if (g.done) continue;
      if (g.cap * left > capacity) {
        level = capacity / left;
        break;
      }
      capacity -= g.cap * g.count;
      left -= g.count;
    }
    Seconds dt = std::numeric_limits<double>::infinity();
    for (const auto& [key, g] : groups) {
      if (!g.done) dt = std::min(dt, g.remaining / std::min(g.cap, level));
    }
    now += dt;
    for (auto& [key, g] : groups) {
      if (g.done) continue;
      g.remaining -= std::min(g.cap, level) * dt;
      if (g.remaining <= key.second * 1e-12) g.done = true, g.finish_s = now;
    }
  }
  std::vector<Seconds> out;
  out.reserve(caps.size());
  for (std::size_t i = 0; i < caps.size(); ++i) out.push_back(groups.at({caps[i], bytes[i]}).finish_s);
  return out;
}

}  // namespace

std::optional<Seconds> star_max_min_time_s(const CollectiveSchedule& schedule, const std::vector<StarLink>& links,
                                           double backbone_Bps, Seconds backbone_latency_s, double tcp_gamma) {
  Seconds total = 0.0;
  std::vector<int> out_flows(links.size()), in_flows(links.size());
  std::vector<double> caps, bytes;
  for (const CollectivePhase& phase : schedule.phases) {
    std::fill(out_flows.begin(), out_flows.end(), 0);
    std::fill(in_flows.begin(), in_flows.end(), 0);
    caps.clear();
    bytes.clear();
    for (const CollectiveFlow& f : phase.flows) {
      if (++out_flows[f.src] > 1 || ++in_flows[f.dst] > 1) return std::nullopt;
      const Seconds latency = links[f.src].latency_s + backbone_latency_s + links[f.dst].latency_s;
      double cap = std::min(links[f.src].bandwidth_Bps, links[f.dst].bandwidth_Bps);
      if (tcp_gamma > 0.0 && latency > 0.0) cap = std::min(cap, tcp_gamma / (2.0 * latency));
      caps.push_back(cap);
      bytes.push_back(f.bytes);
    }
    const std::vector<Seconds> finish = backbone_max_min(caps, bytes, backbone_Bps);
    Seconds phase_s = 0.0, hop_s = 0.0;
    for (std::size_t i = 0; i < phase.flows.size(); ++i) {
      const CollectiveFlow& f = phase.flows[i];
      const Seconds latency = links[f.src].latency_s + backbone_latency_s + links[f.dst].latency_s;
      phase_s = std::max(phase_s, finish[i] + latency);
      hop_s = std::max(hop_s, latency);
    }
    total += phase.repeat * (phase_s + phase.extra_hops * hop_s);
  }
  return total;
}

Seconds closed_form_s(const scenarios::AllreduceSpec& spec, std::size_t p, double bytes, Seconds alpha_s,
                      double bandwidth_Bps, std::int64_t chunks) {
  if (p < 2) return 0.0;
  const double pd = static_cast<double>(p);
  const double beta = 1.0 / bandwidth_Bps;
  switch (spec.algorithm) {
    case AllreduceAlgorithm::kRing:
      return 2.0 * (pd - 1.0) * alpha_s + ring_allreduce_bytes(pd, bytes) * beta;
    case AllreduceAlgorithm::kHierarchicalRing: {
      const double n = static_cast<double>(std::min<std::int64_t>(spec.workers_per_node, static_cast<std::int64_t>(p)));
      const double m = pd / n;
      return 2.0 * ((n - 1.0) * alpha_s + (n - 1.0) / n * bytes * beta) + 2.0 * (m - 1.0) * alpha_s +
             2.0 * (m - 1.0) / m * bytes / n * beta;
    }
    case AllreduceAlgorithm::kDoubleBinaryTree:
      return dtree_time_s(p, bytes, alpha_s, bandwidth_Bps, std::max<std::int64_t>(chunks, 1));
    case AllreduceAlgorithm::kHalvingDoubling: {
      const double q = static_cast<double>(floor_pow2(p));
      const double fold = q < pd ? 2.0 * (alpha_s + bytes * beta) : 0.0;
      return 2.0 * std::log2(q) * alpha_s + 2.0 * (q - 1.0) / q * bytes * beta + fold;
    }
    case AllreduceAlgorithm::kParameterServer: {
      const double s = std::min(pd, static_cast<double>(std::max<std::int64_t>(spec.shards, 1)));
      return 2.0 * (alpha_s + (pd - 1.0) * bytes / s * beta);
    }
  }
  return 0.0;
}

std::int64_t bucket_count(const scenarios::AllreduceSpec& spec, double gradient_bytes) {
  if (spec.bucket_bytes > 0.0) {
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(gradient_bytes / spec.bucket_bytes)));
  }
  return std::max<std::int64_t>(1, spec.buckets);
}

Seconds overlapped_end_s(Seconds start_s, Seconds compute_end_s, std::int64_t buckets, double backward_fraction,
                         Seconds bucket_s) {
  const Seconds compute = compute_end_s - start_s;
  const double k = static_cast<double>(std::max<std::int64_t>(buckets, 1));
  Seconds end = start_s;
  for (std::int64_t i = 0; i < std::max<std::int64_t>(buckets, 1); ++i) {
    const Seconds ready =
        i + 1 == buckets
            ? compute_end_s
            : start_s + compute * (1.0 - backward_fraction + backward_fraction * static_cast<double>(i + 1) / k);
    end = std::max(end, ready) + bucket_s;
  }
  return end;
}

}  // namespace omnilearn::sim
