// Gavel's round-based mechanism (Narayanan et al., OSDI 2020, §5): turns time fractions x (max_min_fairness.h)
// into one round's assignment, so that over many rounds each job's share of time on each kind tends to x.
// Pure functions: thread-safe.
#pragma once

#include <vector>

#include "omnilearn/scheduler/max_min_fairness.h"

namespace omnilearn::scheduler {

// Returns, per job, the kind index it runs on this round, or -1. Priority of (job j, kind k) is
// x[j][k] / received[j][k] (received: the fraction of the job's time in the system it has run on k; a job that
// has had none of its share yet has infinite priority), 0 where x[j][k] is 0. The pairs are taken in decreasing
// priority (ties: larger x, lower job index, lower kind index); a pair is assigned when the job has no kind yet
// this round and `workers[j]` devices of kind k are still free in `capacity`.
std::vector<int> assign_round(const std::vector<std::vector<double>>& x,
                              const std::vector<std::vector<double>>& received, const std::vector<int>& workers,
                              std::vector<int> capacity);

// One round with packed pairs: per job, the kind it runs on (-1: none) and the job it shares one device with (-1:
// alone).
struct PackedRound {
  std::vector<int> kind;
  std::vector<int> partner;
};

// The same mechanism over Gavel's job combinations: the single (j, k) with x[j][k] and each pair p with pair_x[p]
// (problem.pairs[p], one device of its kind). A single's priority is x[j][k] / received[j][k] (received: the
// fraction of the job's time in the system it ran alone on k); a pair's, the smallest over its two jobs of
// packed_share / packed_received, where a job's packed_share on k is the pair_x of its pairs on k and
// packed_received the fraction of its time it ran packed on k (infinite when nothing received yet). Without pairs
// this is assign_round. Combinations are taken in decreasing priority (ties: larger fraction, then the singles in
// (job, kind) order, then the pairs in their order); one is assigned when none of its jobs has a kind yet this
// round and its devices are free.
PackedRound assign_packed_round(const TimeFractions& fractions, const MaxMinProblem& problem,
                                const std::vector<std::vector<double>>& received,
                                const std::vector<std::vector<double>>& packed_received);

}  // namespace omnilearn::scheduler
