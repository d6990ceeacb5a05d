// replay_chakra(): the ranks of a Chakra execution trace (traces/chakra_trace.h) replayed as an event simulation on
// a simple network, so that ASTRA-sim users can bring their traces. Each rank runs its compute nodes one at a time
// on one compute stream; sends, receives and collectives run beside it, matched across ranks; docs/hybrid.md.
// Pure function: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/traces/chakra_trace.h"

namespace omnilearn::hybrid {

// One link class: a transfer of b bytes takes latency_s + b / bandwidth_bytes_per_s.
struct ChakraLink {
  double bandwidth_bytes_per_s = 12.5e9;  // 100 Gb/s
  Seconds latency_s = 5e-6;
};

// The network: one link class between all ranks, or, with ranks_per_node > 0, `intra` between ranks of one node
// (rank / ranks_per_node equal) and `inter` between nodes. A collective whose ranks span nodes runs at `inter`.
struct ChakraNetwork {
  ChakraLink inter;
  ChakraLink intra;
  std::int64_t ranks_per_node = 0;  // 0: every pair uses `inter`
};

struct ChakraReplayOptions {
  // Per rank: a compute node takes duration_micros / speed (2: twice as fast). Empty: 1 for every rank.
  std::vector<double> speed;
  ChakraNetwork network;
};

// What one rank did. compute_s and comm_s may overlap (communication runs beside the compute stream); idle_s is the
// time up to finish_s spent in neither (waiting for a dependency or for a peer to arrive).
struct ChakraRankTimes {
  Seconds finish_s = 0.0;   // its last node's end (0 for a rank without nodes)
  Seconds compute_s = 0.0;  // its compute nodes' seconds
  Seconds comm_s = 0.0;     // seconds with at least one of its transfers or collectives in flight
  Seconds idle_s = 0.0;
};

struct ChakraReplay {
  Seconds makespan_s = 0.0;  // the latest finish_s
  std::vector<ChakraRankTimes> ranks;
};

// Replays `ranks` (rank r = ranks[r]) from time 0. A node is ready when all its data and control dependencies have
// ended. A compute node (COMP_NODE) starts when it is ready and its rank's compute stream is free (the ready node
// that became ready first, then the earliest in the file) and takes duration_micros x 1e-6 / speed. Metadata and
// memory nodes end as soon as they are ready. The k-th send from rank s to rank d with tag t (in file order) meets
// the k-th receive on d from s with tag t; both end at max(both ready) + latency + bytes / bandwidth, bytes the
// send's comm_size. The k-th collective of a rank in process group g (pg_name; "" is all ranks; a named group holds
// the ranks whose traces name it) meets the k-th of every other rank of g; all end at the latest arrival plus the
// ring cost of n ranks and B bytes (the largest comm_size): all-reduce 2(n-1)/n·B/bw + 2(n-1)·lat; all-gather,
// reduce-scatter, all-to-all, gather and scatter (n-1)/n·B/bw + (n-1)·lat; broadcast and reduce B/bw +
// ceil(log2 n)·lat; barrier ceil(log2 n)·lat; 0 for n = 1. Deterministic.
// Refused, naming the rank and node: a speed that is not > 0 and finite or a speed count other than the ranks', a
// dependency on an unknown id, a send or receive with a peer outside the ranks or itself, a send without its
// receive or the reverse, collectives of one group whose count or kind differs across its ranks, and a deadlock
// (naming a node that waits, and what for).
Result<ChakraReplay> replay_chakra(const std::vector<traces::ChakraRank>& ranks, const ChakraReplayOptions& options);

}  // namespace omnilearn::hybrid
