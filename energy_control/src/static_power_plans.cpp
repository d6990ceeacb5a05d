#include "omnilearn/energy_control/static_power_plans.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

namespace omnilearn::energy_control {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The workers of one kind in the grid search: how many, one's model, its candidate batches and, per batch and
// limit, the compute time and the excess energy (P − wait) t.
struct Group {
  std::string kind;
  double factor = 1.0;  // the workers' time factor
  std::size_t count = 0;
  std::vector<BatchSize> batches;
  std::vector<std::vector<Seconds>> time_s;   // [batch][limit]
  std::vector<std::vector<double>> excess_j;  // [batch][limit]
};

// The group of worker k: its kind and its time factor.
std::size_t group_of(const std::vector<Group>& groups, const std::string& kind, double factor) {
  std::size_t g = 0;
  while (g < groups.size() && !(groups[g].kind == kind && groups[g].factor == factor)) ++g;
  return g;
}

std::vector<Group> make_groups(const GpuClusterModel& model, BatchSize step, std::span<const double> time_factor) {
  std::vector<Group> groups;
  for (std::size_t k = 0; k < model.kinds.size(); ++k) {
    const double factor = time_factor.empty() ? 1.0 : time_factor[k];
    const std::size_t g = group_of(groups, model.kinds[k], factor);
    if (g < groups.size()) {
      ++groups[g].count;
      continue;
    }
    Group grp{model.kinds[k], factor, 1, {}, {}, {}};
    const auto& w = model.workers[k];
    for (BatchSize b = (w.lo + step - 1) / step * step; b <= w.hi; b += step) {
      grp.batches.push_back(b);
      const auto i = static_cast<std::size_t>(b - w.lo);
      grp.time_s.emplace_back();
      grp.excess_j.emplace_back();
      for (const auto& c : w.limits) {
        grp.time_s.back().push_back(c.time_s[i] * factor);
        grp.excess_j.back().push_back((c.power_w[i] - w.wait_power_w) * c.time_s[i] * factor);
      }
    }
    groups.push_back(std::move(grp));
  }
  return groups;
}

// Exhaustive search over the groups' batches (summing to B) and, for each split, their limits. The cost of a
// point is η Σ count_g excess_g + K (max t_g + comm), K = η Σ wait + (1 − η) P_max: joint_step_cost rearranged.
class GridSearch {
 public:
  GridSearch(std::vector<Group> groups, double eta, double k_per_s, Seconds comm_s)
      : groups_(std::move(groups)),
        eta_(eta),
        k_per_s_(k_per_s),
        comm_s_(comm_s),
        batch_(groups_.size()),
        limit_(groups_.size()),
        best_batch_(groups_.size()),
        best_limit_(groups_.size()) {}

  void split(std::size_t g, BatchSize left) {
    if (g == groups_.size()) {
      if (left == 0) limits();
      return;
    }
    const auto count = static_cast<BatchSize>(groups_[g].count);
    for (std::size_t i = 0; i < groups_[g].batches.size(); ++i) {
      const BatchSize used = count * groups_[g].batches[i];
      if (used > left) break;
      batch_[g] = i;
      split(g + 1, left - used);
    }
  }

  bool found() const { return best_cost_ < kInf; }
  const std::vector<Group>& groups() const { return groups_; }
  std::size_t best_batch(std::size_t g) const { return best_batch_[g]; }
  std::size_t best_limit(std::size_t g) const { return best_limit_[g]; }

 private:
  // The best limits for the batches in batch_: the slowest compute of the best point is some group's time at some
  // limit; with that as a bound, each group at its cheapest limit meeting it is as good (exact, and far fewer
  // points than every combination of limits).
  void limits() {
    for (std::size_t s = 0; s < groups_.size(); ++s) {
      for (const Seconds bound : groups_[s].time_s[batch_[s]]) {
        double excess = 0.0;
        Seconds slowest = 0.0;
        bool feasible = true;
        for (std::size_t g = 0; g < groups_.size() && feasible; ++g) {
          const auto& t = groups_[g].time_s[batch_[g]];
          const auto& e = groups_[g].excess_j[batch_[g]];
          std::size_t pick = t.size();
          for (std::size_t l = 0; l < t.size(); ++l) {
            if (t[l] <= bound && (pick == t.size() || e[l] < e[pick])) pick = l;
          }
          feasible = pick < t.size();
          if (!feasible) break;
          limit_[g] = pick;
          excess += static_cast<double>(groups_[g].count) * e[pick];
          slowest = std::max(slowest, t[pick]);
        }
        const double cost = eta_ * excess + k_per_s_ * (slowest + comm_s_);
        if (feasible && cost < best_cost_) best_cost_ = cost, best_batch_ = batch_, best_limit_ = limit_;
      }
    }
  }

  std::vector<Group> groups_;
  double eta_;
  double k_per_s_;
  Seconds comm_s_;
  std::vector<std::size_t> batch_, limit_, best_batch_, best_limit_;
  double best_cost_ = kInf;
};

}  // namespace

Result<ZeusChoice> zeus_best_measured(const traces::GpuPowerTable& table, const std::string& kind,
                                      const std::string& workload, double eta) {
  ZeusChoice best{kind, 0, 0.0};
  double best_cost = kInf;
  double max_limit = 0.0;
  for (const std::int64_t b : table.batches(kind, workload)) {
    for (const std::int64_t l : table.power_limits(kind, workload, b))
      max_limit = std::max(max_limit, static_cast<double>(l));
  }
  for (const std::int64_t b : table.batches(kind, workload)) {
    for (const std::int64_t l : table.power_limits(kind, workload, b)) {
      auto f = table.figure(kind, workload, b, static_cast<double>(l));
      if (!f) return f.status();
      const double cost = eta * f->energy_per_epoch_j + (1.0 - eta) * max_limit * f->time_per_epoch_s;
      if (cost < best_cost) best_cost = cost, best = {kind, b, static_cast<double>(l)};
    }
  }
  if (best.batch == 0) return Status::not_found("no measured rows of " + kind + " for " + workload);
  return best;
}

std::size_t zeus_limit_at_batch(const controller::WorkerPowerModel& worker, BatchSize batch, double eta) {
  const auto i = static_cast<std::size_t>(batch - worker.lo);
  const double max_limit = worker.limits.back().limit_w;
  std::size_t best = 0;
  double best_cost = kInf;
  for (std::size_t l = 0; l < worker.limits.size(); ++l) {
    const auto& c = worker.limits[l];
    const double cost = eta * c.power_w[i] * c.time_s[i] + (1.0 - eta) * max_limit * c.time_s[i];
    if (cost < best_cost) best_cost = cost, best = l;
  }
  return best;
}

Result<controller::JointPlan> equal_batch_plan(const GpuClusterModel& model, std::vector<std::size_t> limit) {
  const std::size_t n = model.workers.size();
  controller::JointPlan plan;
  for (std::size_t k = 0; k < n; ++k) {
    const BatchSize share = model.global_batch / static_cast<BatchSize>(n) +
                            (static_cast<BatchSize>(k) < model.global_batch % static_cast<BatchSize>(n) ? 1 : 0);
    plan.batch.push_back(share);
  }
  plan.limit = std::move(limit);
  auto cost = controller::joint_step_cost(model.workers, plan.batch, plan.limit, model.cost);
  if (!cost) return cost.status().with_context("equal batches");
  plan.predicted = *cost;
  return plan;
}

std::vector<std::size_t> highest_limits(const GpuClusterModel& model) {
  std::vector<std::size_t> out;
  for (const auto& w : model.workers) out.push_back(w.limits.size() - 1);
  return out;
}

Result<std::vector<std::size_t>> limits_by_kind(const GpuClusterModel& model, const std::vector<ZeusChoice>& choices) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < model.workers.size(); ++k) {
    auto c =
        std::find_if(choices.begin(), choices.end(), [&](const ZeusChoice& z) { return z.kind == model.kinds[k]; });
    const auto& limits = model.workers[k].limits;
    auto l = c == choices.end() ? limits.end() : std::find_if(limits.begin(), limits.end(), [&](const auto& curve) {
      return curve.limit_w == c->limit_w;
    });
    if (l == limits.end()) return Status::not_found("no chosen limit among " + model.kinds[k] + "'s limits");
    out.push_back(static_cast<std::size_t>(l - limits.begin()));
  }
  return out;
}

Result<controller::JointPlan> best_static_grid(const GpuClusterModel& model, BatchSize batch_step,
                                               std::span<const double> time_factor) {
  if (batch_step < 1) return Status::invalid_argument("batch_step must be >= 1");
  if (!time_factor.empty() && time_factor.size() != model.workers.size()) {
    return Status::invalid_argument("time_factor needs one value per worker");
  }
  double wait_w = 0.0;
  for (const auto& w : model.workers) wait_w += w.wait_power_w;
  const double k_per_s = model.cost.eta * wait_w + (1.0 - model.cost.eta) * model.cost.max_power_w;
  GridSearch search(make_groups(model, batch_step, time_factor), model.cost.eta, k_per_s, model.cost.comm_s);
  search.split(0, model.global_batch);
  if (!search.found()) {
    return Status::invalid_argument("no grid point (batches multiples of " + std::to_string(batch_step) +
                                    ") sums to the global batch");
  }
  controller::JointPlan plan;
  for (std::size_t k = 0; k < model.kinds.size(); ++k) {
    const std::size_t g = group_of(search.groups(), model.kinds[k], time_factor.empty() ? 1.0 : time_factor[k]);
    plan.batch.push_back(search.groups()[g].batches[search.best_batch(g)]);
    plan.limit.push_back(search.best_limit(g));
  }
  auto cost = controller::joint_step_cost(model.workers, plan.batch, plan.limit, model.cost, time_factor);
  if (!cost) return cost.status();
  plan.predicted = *cost;
  return plan;
}

}  // namespace omnilearn::energy_control
