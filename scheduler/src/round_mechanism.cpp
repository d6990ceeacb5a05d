#include "omnilearn/scheduler/round_mechanism.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "omnilearn/base/check.h"

namespace omnilearn::scheduler {

PackedRound assign_packed_round(const TimeFractions& fractions, const MaxMinProblem& problem,
                                const std::vector<std::vector<double>>& received) {
  const std::vector<std::vector<double>>& x = fractions.x;
  const std::size_t jobs = x.size();
  const std::size_t kinds = problem.capacity.size();
  OMNI_CHECK(received.size() == jobs && problem.workers.size() == jobs, "assign_round: one row per job");
  OMNI_CHECK(fractions.pair_x.size() == problem.pairs.size(), "assign_round: one fraction per pair");
  // share[j][k]: the job's planned fraction of time on kind k, alone or packed.
  std::vector<std::vector<double>> share = x;
  for (std::size_t j = 0; j < jobs; ++j) {
    OMNI_CHECK(x[j].size() == kinds && received[j].size() == kinds, "assign_round: one per kind");
  }
  for (std::size_t p = 0; p < problem.pairs.size(); ++p) {
    share[problem.pairs[p].a][problem.pairs[p].kind] += fractions.pair_x[p];
    share[problem.pairs[p].b][problem.pairs[p].kind] += fractions.pair_x[p];
  }
  const auto priority_of = [&](std::size_t j, std::size_t k) {
    return received[j][k] > 0.0 ? share[j][k] / received[j][k] : std::numeric_limits<double>::infinity();
  };
  struct Combination {
    double priority;
    double x;
    std::size_t index;  // singles j * kinds + k, then the pairs
  };
  std::vector<Combination> combinations;
  for (std::size_t j = 0; j < jobs; ++j) {
    for (std::size_t k = 0; k < kinds; ++k) {
      if (x[j][k] > 0.0) combinations.push_back({priority_of(j, k), x[j][k], j * kinds + k});
    }
  }
  for (std::size_t p = 0; p < problem.pairs.size(); ++p) {
    const PackedCombination& c = problem.pairs[p];
    if (fractions.pair_x[p] <= 0.0) continue;
    combinations.push_back(
        {std::min(priority_of(c.a, c.kind), priority_of(c.b, c.kind)), fractions.pair_x[p], jobs * kinds + p});
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
  return assign_packed_round(fractions, problem, received).kind;
}

}  // namespace omnilearn::scheduler
