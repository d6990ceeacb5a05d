// Gavel's heterogeneity-aware max-min fairness (Narayanan et al., OSDI 2020, §4.1) as a linear program over time
// fractions, solved exactly by GLPK's simplex. A job x device-kind throughput matrix and the cluster's counts in,
// time fractions out: no facts, no rounds (round_mechanism.h turns fractions into rounds). Pure: thread-safe.
#pragma once

#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::scheduler {

struct MaxMinProblem {
  std::vector<int> capacity;                    // devices of each kind, > 0
  std::vector<int> workers;                     // per job: the devices it runs on at once (Gavel's scale factor)
  std::vector<std::vector<double>> throughput;  // [job][kind]: samples/s of one worker; 0 where it cannot run
};

struct TimeFractions {
  // x[j][k]: the fraction of time job j runs on `workers[j]` devices of kind k. sum_k x[j][k] <= 1 and
  // sum_j workers[j] x[j][k] <= capacity[k]; x[j][k] = 0 where throughput is 0 or workers[j] > capacity[k].
  std::vector<std::vector<double>> x;
  double min_ratio = 0.0;  // the optimum: min_j throughput_j(x) / throughput_j(x_equal)
};

// Maximises min_j w_j sum_k T[j][k] x[j][k] / E_j, with E_j = sum_k (capacity[k] / C) T[j][k] (C: all devices) the
// job's per-worker throughput on an equal share spread over the kinds by their counts (Gavel's ProportionalPolicy,
// normalised by the scale factor; the 1/N of N jobs is a constant factor that does not move the optimum). Then,
// among the optimal x, takes one with the largest sum of the jobs' ratios (a second LP), so capacity that the
// slowest job cannot use is not left idle. Errors: inconsistent sizes, a non-positive count, a negative throughput,
// a job with no kind open to it (the message names its index), or GLPK failing.
Result<TimeFractions> solve_max_min_fairness(const MaxMinProblem& problem);

}  // namespace omnilearn::scheduler
