// Gavel's heterogeneity-aware max-min fairness (Narayanan et al., OSDI 2020, §4.1) as a linear program over time
// fractions, solved exactly by GLPK's simplex. A job x device-kind throughput matrix and the cluster's counts in,
// time fractions out: no facts, no rounds (round_mechanism.h turns fractions into rounds). With packed pairs, Gavel's
// space-sharing form (§3.1): a pair of one-worker jobs on one device is a combination with its own fraction. Pure:
// thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::scheduler {

// Two one-worker jobs sharing one device of `kind`: job `a` keeps `fraction_a` of its speed alone there, `b`
// keeps `fraction_b`.
struct PackedCombination {
  std::size_t a = 0;
  std::size_t b = 0;
  std::size_t kind = 0;
  double fraction_a = 0.0;
  double fraction_b = 0.0;
};

struct MaxMinProblem {
  std::vector<int> capacity;                    // devices of each kind, > 0
  std::vector<int> workers;                     // per job: the devices it runs on at once (Gavel's scale factor)
  std::vector<std::vector<double>> throughput;  // [job][kind]: samples/s of one worker; 0 where it cannot run
  // The pairs that may share a device (Gavel's job combinations beyond single jobs): both jobs of workers 1 and
  // running on the kind, a != b, fractions finite and >= 0. Empty: Gavel's LP without space sharing.
  std::vector<PackedCombination> pairs;
};

struct TimeFractions {
  // x[j][k]: the fraction of time job j runs alone on `workers[j]` devices of kind k; pair_x[p]: the fraction of
  // time pairs[p] shares one device of its kind. For every job, its x[j][*] plus the pair_x of its pairs <= 1; for
  // every kind, sum_j workers[j] x[j][k] plus the pair_x of the kind's pairs <= capacity[k]; x[j][k] = 0 where
  // throughput is 0 or workers[j] > capacity[k].
  std::vector<std::vector<double>> x;
  std::vector<double> pair_x;
  double min_ratio = 0.0;  // the optimum: min_j throughput_j(x) / throughput_j(x_equal)
};

// Maximises min_j (w_j sum_k T[j][k] x[j][k] + sum over j's pairs p of T[j][kind_p] fraction_j,p pair_x[p]) / E_j
// (a job's effective throughput summed over the combinations it is in, Gavel's space-sharing objective), with E_j = sum_k (capacity[k] / C) T[j][k] (C: all devices) the
// job's per-worker throughput on an equal share spread over the kinds by their counts (Gavel's ProportionalPolicy,
// normalised by the scale factor; the 1/N of N jobs is a constant factor that does not move the optimum). Then,
// among the optimal x, takes one with the largest sum of the jobs' ratios (a second LP), so capacity that the
// slowest job cannot use is not left idle. Errors: inconsistent sizes, a non-positive count, a negative throughput,
// a job with no kind open to it (the message names its index), a bad pair (named by its index), or GLPK failing.
// Without pairs, jobs of equal workers and throughputs get equal fractions: the LP is solved over these classes (an
// optimum of that form always exists), so its size grows with the kinds of jobs, not their number.
Result<TimeFractions> solve_max_min_fairness(const MaxMinProblem& problem);

}  // namespace omnilearn::scheduler
