// CollectiveModel (pure part): the all-reduce algorithms as schedules of concurrent point-to-point flows, their
// alpha-beta closed forms, and the analytic evaluation of a schedule on a uniform star. No SimGrid here: the flow-level
// execution is collective_runner.h. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

// One transfer of a phase: from participant `src` to participant `dst` (indices into the participant list).
struct CollectiveFlow {
  std::size_t src = 0;
  std::size_t dst = 0;
  double bytes = 0.0;
};

// Flows that run concurrently; the phase ends when the last one does, then waits `extra_hops` more hop latencies
// (the remaining steps of an aggregated ring, whose bytes the flows already carry). The whole phase runs `repeat`
// times back to back (the stages of a pipeline).
struct CollectivePhase {
  std::vector<CollectiveFlow> flows;
  double extra_hops = 0.0;
  double repeat = 1.0;
};

struct CollectiveSchedule {
  std::vector<CollectivePhase> phases;
};

// The pipeline chunks of a double binary tree: spec.chunks when > 0, else the count that minimises the closed form
// for `p` ranks, `bytes`, hop latency `alpha_s` and link bandwidth `bandwidth_Bps` (1 to 1024).
std::int64_t tree_chunks(const scenarios::AllreduceSpec& spec, std::size_t p, double bytes, Seconds alpha_s,
                         double bandwidth_Bps);

// The all-reduce of `bytes` among `participants` (worker ids, ascending; hierarchical rings group them into nodes of
// spec.workers_per_node consecutive ids). Flow endpoints index `participants`. Empty for fewer than 2 participants.
// - ring: one flow per rank to its successor with the 2(P-1)/P share it sends in all 2(P-1) steps.
// - hierarchical-ring: an intra-node reduce-scatter ring, one inter-node ring per local rank over the 1/n shard, an
//   intra-node all-gather ring (NCCL's 2D ring). Nodes left with fewer participants (workers down) keep their own
//   ring sizes; the shard stays 1/n of the widest node (an approximation of an uneven 2D ring).
// - double-binary-tree: NCCL's two binary trees (ncclGetDtree: the second mirrored or shifted by one, so a rank is an
//   inner node of at most one), each with half the bytes, pipelined in `chunks`: (depth + chunks - 1) reduce
//   stages, as many broadcast stages.
// - halving-doubling: Rabenseifner: recursive-halving reduce-scatter, recursive-doubling all-gather; ranks beyond
//   the largest power of two fold into it first and get the result last.
// - parameter-server: spec.shards shards on evenly spaced participants; every rank pushes bytes/shards to each
//   other shard, then pulls them back.
CollectiveSchedule make_schedule(const scenarios::AllreduceSpec& spec, const std::vector<WorkerId>& participants,
                                 double bytes, std::int64_t chunks);

// The schedule's time on a star whose every node has full-duplex links of `bandwidth_Bps`, hop latency `alpha_s`
// (node link + backbone + node link) and a backbone that is never the bottleneck: each phase takes
// alpha (1 + extra_hops) + (the most bytes any node sends or receives) / bandwidth, times repeat. Exact for
// max-min sharing when a phase's flows are of one size (every schedule above, when nodes are full).
Seconds uniform_star_time_s(const CollectiveSchedule& schedule, std::size_t participants, Seconds alpha_s,
                            double bandwidth_Bps);

// A participant's own link on a star: its bandwidth (each direction) and latency.
struct StarLink {
  double bandwidth_Bps = 0.0;
  Seconds latency_s = 0.0;
};

// The schedule's time on a star with unequal links (links[i] is participant i's) and a shared backbone, when every
// phase gives each participant at most one flow out and one in: each flow is capped by its two links and by TCP's
// window (tcp_gamma / (2 x route latency), SimGrid CM02's bound), and the flows share the backbone max-min fairly,
// re-evaluated as they finish; each flow also waits its route latency once (the flows are taken to start sharing
// together). nullopt when a phase has a participant with two flows out or in (those contend on its own link: the
// flow-level path handles them).
std::optional<Seconds> star_max_min_time_s(const CollectiveSchedule& schedule, const std::vector<StarLink>& links,
                                           double backbone_Bps, Seconds backbone_latency_s, double tcp_gamma);

// The bytes each of `p` workers sends in a ring all-reduce of `bytes`, 2(p - 1)/p x bytes (a reduce-scatter, then an
// all-gather): the one home of the ring's volume, used by its closed form, the finish-time fairness estimate and the
// multi-job simulator's bandwidth-equivalent flows.
inline double ring_allreduce_bytes(double p, double bytes) { return 2.0 * (p - 1.0) / p * bytes; }

// The textbook alpha-beta closed form of each algorithm for `p` ranks (p divisible by workers_per_node for the
// hierarchical ring), written independently of the schedules so that tests can hold one against the other.
Seconds closed_form_s(const scenarios::AllreduceSpec& spec, std::size_t p, double bytes, Seconds alpha_s,
                      double bandwidth_Bps, std::int64_t chunks);

// The bytes of one gradient bucket and the bucket count: spec.bucket_bytes > 0 sets the size (the count rounds up),
// else spec.buckets equal buckets.
std::int64_t bucket_count(const scenarios::AllreduceSpec& spec, double gradient_bytes);

// DDP overlap, all ranks starting the step at `start_s` and the slowest finishing its compute at `compute_end_s`:
// the forward pass is (1 - backward_fraction) of the compute, the backward pass releases `buckets` equal buckets at
// even intervals (uniform layers), and bucket i's all-reduce (bucket_s each, one at a time, in order) starts when it
// is released and the previous one is done. Returns when the last one ends; with one bucket, compute_end_s + bucket_s.
Seconds overlapped_end_s(Seconds start_s, Seconds compute_end_s, std::int64_t buckets, double backward_fraction,
                         Seconds bucket_s);

}  // namespace omnilearn::sim
