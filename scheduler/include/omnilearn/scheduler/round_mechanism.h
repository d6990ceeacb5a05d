// Gavel's round-based mechanism (Narayanan et al., OSDI 2020, §5): turns time fractions x (max_min_fairness.h)
// into one round's assignment, so that over many rounds each job's share of time on each kind tends to x.
// Pure function: thread-safe.
#pragma once

#include <vector>

namespace omnilearn::scheduler {

// Returns, per job, the kind index it runs on this round, or -1. Priority of (job j, kind k) is
// x[j][k] / received[j][k] (received: the fraction of the job's time in the system it has run on k; a job that
// has had none of its share yet has infinite priority), 0 where x[j][k] is 0. The pairs are taken in decreasing
// priority (ties: larger x, lower job index, lower kind index); a pair is assigned when the job has no kind yet
// this round and `workers[j]` devices of kind k are still free in `capacity`.
std::vector<int> assign_round(const std::vector<std::vector<double>>& x,
                              const std::vector<std::vector<double>>& received, const std::vector<int>& workers,
                              std::vector<int> capacity);

}  // namespace omnilearn::scheduler
