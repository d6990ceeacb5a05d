#include "omnilearn/scheduler/round_mechanism.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "omnilearn/base/check.h"

namespace omnilearn::scheduler {

PackedRound assign_packed_round(const TimeFractions& fractions, const MaxMinProblem& problem,
                                const std::vector<std::vector<double>>& received,
                                const std::vector<std::vector<double>>& packed_received) {
  const std::vector<std::vector<double>>& x = fractions.x;
  const std::size_t jobs = x.size();
  const std::size_t kinds = problem.capacity.size();
  OMNI_CHECK(received.size() == jobs && packed_received.size() == jobs && problem.workers.size() == jobs,
             "assign_round: one row per job");
  OMNI_CHECK(fractions.pair_x.size() == problem.pairs.size(), "assign_round: one fraction per pair");
  for (std::size_t j = 0; j < jobs; ++j) {
    OMNI_CHECK(x[j].size() == kinds && received[j].size() == kinds && packed_received[j].size() == kinds,
               "assign_round: one per kind");
  }
  // packed_share[j][k]: the job's planned fraction of time packed on kind k.
  std::vector<std::vector<double>> packed_share(jobs, std::vector<double>(kinds, 0.0));
  for (std::size_t p = 0; p < problem.pairs.size(); ++p) {
    packed_share[problem.pairs[p].a][problem.pairs[p].kind] += fractions.pair_x[p];
    packed_share[problem.pairs[p].b][problem.pairs[p].kind] += fractions.pair_x[p];
  }
  const auto priority = [](double share, double got) {
    return got > 0.0 ? share / got : std::numeric_limits<double>::infinity();
  };
  struct Combination {
    double priority;
    double x;
    std::size_t index;  // singles j * kinds + k, then the pairs
  };
  std::vector<Combination> combinations;
  for (std::size_t j = 0; j < jobs; ++j) {
    for (std::size_t k = 0; k < kinds; ++k) {
      if (x[j][k] > 0.0) combinations.push_back({priority(x[j][k], received[j][k]), x[j][k], j * kinds + k});
    }
  }
  for (std::size_t p = 0; p < problem.pairs.size(); ++p) {
    const PackedCombination& c = problem.pairs[p];
    if (fractions.pair_x[p] <= 0.0) continue;
    combinations.push_back({std::min(priority(packed_share[c.a][c.kind], packed_received[c.a][c.kind]),
                                     priority(packed_share[c.b][c.kind], packed_received[c.b][c.kind])),
                            fractions.pair_x[p], jobs * kinds + p});
  }
  std::sort(combinations.begin(), combinations.end(), [](const Combination& a, const Combination& b) {
    return std::tie(b.priority, b.x, a.index) < std::tie(a.priority, a.x, b.index);
  });
  PackedRound out{std::vector<int>(jobs, -1), std::vector<int>(jobs, -1)};
  std::vector<int> capacity = problem.capacity;
  for (const Combination& c : combinations) {
    if (c.index < jobs * kinds) {
      const std::size_t j = c.index / kinds, k = c.index % kinds;
      if (out.kind[j] >= 0 || capacity[k] < problem.workers[j]) continue;
      capacity[k] -= problem.workers[j];
      out.kind[j] = static_cast<int>(k);
      continue;
    }
    const PackedCombination& pair = problem.pairs[c.index - jobs * kinds];
    if (out.kind[pair.a] >= 0 || out.kind[pair.b] >= 0 || capacity[pair.kind] < 1) continue;
    capacity[pair.kind] -= 1;
    out.kind[pair.a] = out.kind[pair.b] = static_cast<int>(pair.kind);
    out.partner[pair.a] = static_cast<int>(pair.b);
    out.partner[pair.b] = static_cast<int>(pair.a);
  }
  return out;
}

std::vector<int> assign_round(const std::vector<std::vector<double>>& x,
                              const std::vector<std::vector<double>>& received, const std::vector<int>& workers,
                              std::vector<int> capacity) {
  TimeFractions fractions;
  fractions.x = x;
  MaxMinProblem problem;
  problem.capacity = std::move(capacity);
  problem.workers = workers;
  const std::vector<std::vector<double>> none(received.size(), std::vector<double>(problem.capacity.size(), 0.0));
  return assign_packed_round(fractions, problem, received, none).kind;
}

}  // namespace omnilearn::scheduler
