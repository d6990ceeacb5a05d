#include "omnilearn/scheduler/round_mechanism.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "omnilearn/base/check.h"

namespace omnilearn::scheduler {

std::vector<int> assign_round(const std::vector<std::vector<double>>& x,
                              const std::vector<std::vector<double>>& received, const std::vector<int>& workers,
                              std::vector<int> capacity) {
  const std::size_t jobs = x.size();
  OMNI_CHECK(received.size() == jobs && workers.size() == jobs, "assign_round: one row per job");
  struct Pair {
    double priority;
    double x;
    std::size_t job;
    std::size_t kind;
  };
  std::vector<Pair> pairs;
  for (std::size_t j = 0; j < jobs; ++j) {
    OMNI_CHECK(x[j].size() == capacity.size() && received[j].size() == capacity.size(), "assign_round: one per kind");
    for (std::size_t k = 0; k < capacity.size(); ++k) {
      if (x[j][k] <= 0.0) continue;
      const double priority = received[j][k] > 0.0 ? x[j][k] / received[j][k] : std::numeric_limits<double>::infinity();
      pairs.push_back({priority, x[j][k], j, k});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    return std::tie(b.priority, b.x, a.job, a.kind) < std::tie(a.priority, a.x, b.job, b.kind);
  });
  std::vector<int> kind_of(jobs, -1);
  for (const Pair& p : pairs) {
    if (kind_of[p.job] >= 0 || capacity[p.kind] < workers[p.job]) continue;
    capacity[p.kind] -= workers[p.job];
    kind_of[p.job] = static_cast<int>(p.kind);
  }
  return kind_of;
}

}  // namespace omnilearn::scheduler
