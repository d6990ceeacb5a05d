#include "omnilearn/controller/policies.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>

#include "omnilearn/base/check.h"
#include "omnilearn/controller/allocation.h"

namespace omnilearn::controller {
namespace {

// The live workers of a snapshot, gathered into dense arrays for the allocation functions.
struct LiveSet {
  std::vector<std::size_t> index;
  std::vector<BatchSize> lo;
  std::vector<BatchSize> hi;

  explicit LiveSet(const ClusterSnapshot& s) {
    for (std::size_t k = 0; k < s.workers.size(); ++k) {
      if (!s.workers[k].live) continue;
      index.push_back(k);
      lo.push_back(s.workers[k].lo);
      hi.push_back(std::max(s.workers[k].lo, s.workers[k].hi));
    }
  }
  BatchPlan scatter(const ClusterSnapshot& s, const std::vector<BatchSize>& dense) const {
    BatchPlan plan{std::vector<BatchSize>(s.workers.size(), 0)};
    for (std::size_t i = 0; i < index.size(); ++i) plan.batch[index[i]] = dense[i];
    return plan;
  }
};

// ASP before any measurement: each live worker keeps its current batch, within its bounds. A worker that has none
// (one that has just come back, whose batch went to 0 when it went down) starts at an equal share of the global
// batch, within its bounds.
BatchPlan keep_current(const ClusterSnapshot& s, const LiveSet& live) {
  const auto n = static_cast<BatchSize>(std::max<std::size_t>(live.index.size(), 1));
  const BatchSize share = std::max<BatchSize>(s.global_batch / n, 1);
  std::vector<BatchSize> dense(live.index.size());
  for (std::size_t i = 0; i < dense.size(); ++i) {
    const BatchSize current = s.workers[live.index[i]].batch;
    dense[i] = std::clamp(current > 0 ? current : share, live.lo[i], live.hi[i]);
  }
  return live.scatter(s, dense);
}

// Proportional split of the snapshot's global batch among live workers. The Controller guarantees a feasible
// global batch, so a failure here is a bug.
BatchPlan split_by_weight(const ClusterSnapshot& s, const LiveSet& live, const std::vector<double>& weights) {
  auto dense = allocate_proportional(weights, live.lo, live.hi, s.global_batch);
  OMNI_CHECK(dense.is_ok(), dense.status().message());
  return live.scatter(s, *dense);
}

// Throughput X_k = b_k / t_k of every live worker. A worker not measured yet is estimated from its last known
// throughput or, failing that, from its nominal capacity times the measured workers' throughput per unit of
// capacity. Returns an empty vector when no live worker is measured (nothing to steer by).
std::vector<double> estimate_throughputs(const ClusterSnapshot& s, const LiveSet& live) {
  double per_capacity = 0.0;
  int measured = 0;
  for (std::size_t k : live.index) {
    const WorkerView& w = s.workers[k];
    if (!w.measured()) continue;
    per_capacity += static_cast<double>(w.batch) / w.compute_s / w.nominal_capacity;
    ++measured;
  }
  if (measured == 0) return {};
  per_capacity /= measured;
  std::vector<double> x;
  x.reserve(live.index.size());
  for (std::size_t k : live.index) {
    const WorkerView& w = s.workers[k];
    if (w.measured()) {
      x.push_back(static_cast<double>(w.batch) / w.compute_s);
    } else if (w.last_throughput > 0.0) {
      x.push_back(w.last_throughput);
    } else {
      x.push_back(w.nominal_capacity * per_capacity);
    }
  }
  return x;
}

// Mean smoothed compute time over measured live workers, the t̄ of the law.
double mean_time(const ClusterSnapshot& s, const LiveSet& live) {
  double sum = 0.0;
  int n = 0;
  for (std::size_t k : live.index) {
    if (s.workers[k].measured()) sum += s.workers[k].compute_s, ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

class UniformPolicy final : public BatchPolicy {
 public:
  std::string_view name() const override { return "uniform"; }
  BatchPlan decide(const ClusterSnapshot& s) override {
    LiveSet live(s);
    return split_by_weight(s, live, std::vector<double>(live.index.size(), 1.0));
  }
};

class StaticPolicy final : public BatchPolicy {
 public:
  std::string_view name() const override { return "static"; }
  BatchPlan decide(const ClusterSnapshot& s) override {
    LiveSet live(s);
    std::vector<double> w;
    for (std::size_t k : live.index) w.push_back(s.workers[k].nominal_capacity);
    return split_by_weight(s, live, w);
  }
};

// The OmniLearn law. BSP: b̂_k = b_k - g X_k (t_k - t̄), then scaled to sum B, water-filled and rounded. With
// gain g = 1, b̂_k = X_k t̄, so the plan is the throughput-proportional split. ASP: the same correction per worker,
// clipped to the bounds, rounded to the nearest integer; the sum is not conserved.
class OmniLearnPolicy final : public BatchPolicy {
 public:
  OmniLearnPolicy(PolicyOptions options, bool force_asp) : options_(std::move(options)), force_asp_(force_asp) {}
  std::string_view name() const override { return force_asp_ ? "omnilearn-asp" : "omnilearn"; }

  BatchPlan decide(const ClusterSnapshot& s) override {
    LiveSet live(s);
    const std::vector<double> x = estimate_throughputs(s, live);
    if (x.empty()) return s.mode == TrainingMode::kBsp ? rebalance_current(s, live) : keep_current(s, live);
    const double t_bar = mean_time(s, live);
    std::vector<double> candidate(live.index.size());
    for (std::size_t i = 0; i < live.index.size(); ++i) {
      const WorkerView& w = s.workers[live.index[i]];
      // A worker without a current measurement (a joiner) is placed directly at X t̄.
      const double b = w.measured() ? static_cast<double>(w.batch) : x[i] * t_bar;
      const double t = w.measured() ? w.compute_s : t_bar;
      candidate[i] = std::max(b - options_.gain * x[i] * (t - t_bar), 1e-9);
    }
    if (force_asp_ || s.mode == TrainingMode::kAsp) {
      std::vector<BatchSize> dense(live.index.size());
      for (std::size_t i = 0; i < dense.size(); ++i) {
        dense[i] = std::clamp(static_cast<BatchSize>(std::llround(candidate[i])), live.lo[i], live.hi[i]);
      }
      return live.scatter(s, dense);
    }
    return split_by_weight(s, live, candidate);
  }

 private:
  // Before any measurement: keep the current batches, re-split only if the sum or liveness requires it.
  BatchPlan rebalance_current(const ClusterSnapshot& s, const LiveSet& live) {
    std::vector<double> w;
    for (std::size_t k : live.index) w.push_back(std::max<double>(1.0, static_cast<double>(s.workers[k].batch)));
    return split_by_weight(s, live, w);
  }

  PolicyOptions options_;
  bool force_asp_;
};

// The ASP batches sized for a staleness bound (staleness_bounded_plan) from each live worker's throughput.
class StalenessBoundedPolicy final : public BatchPolicy {
 public:
  explicit StalenessBoundedPolicy(double bound) : bound_(bound) {}
  std::string_view name() const override { return "staleness-bounded"; }

  BatchPlan decide(const ClusterSnapshot& s) override {
    LiveSet live(s);
    const std::vector<double> x = estimate_throughputs(s, live);
    if (x.empty()) return keep_current(s, live);
    std::vector<double> per_sample_s(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) per_sample_s[i] = x[i] > 0.0 ? 1.0 / x[i] : 0.0;
    const auto n = static_cast<BatchSize>(std::max<std::size_t>(s.workers.size(), 1));
    const BatchSize b_ref = std::max<BatchSize>(s.global_batch / n, 1);
    return live.scatter(s, staleness_bounded_plan(per_sample_s, live.lo, live.hi, b_ref, bound_));
  }

 private:
  double bound_;
};

// Least squares fit of t = alpha + beta b over (b, t) observations with at least two distinct batches.
// alpha is kept non-negative (refit through the origin otherwise). Returns nullopt if no usable fit.
// Uses the worker's current period and up to window - 1 earlier ones.
std::optional<AffineCost> fit_affine(const WorkerView& w, std::size_t window) {
  double n = 0, sb = 0, st = 0, sbb = 0, sbt = 0;
  BatchSize b_min = 0, b_max = 0;
  auto add = [&](const Observation& o) {
    const double b = static_cast<double>(o.batch);
    const double t = o.compute_s;
    if (n == 0) b_min = b_max = o.batch;
    b_min = std::min(b_min, o.batch);
    b_max = std::max(b_max, o.batch);
    n += 1, sb += b, st += t, sbb += b * b, sbt += b * t;
  };
  if (w.measured()) add(Observation{w.batch, w.compute_s});
  const std::size_t keep = window > 1 ? window - 1 : 0;
  const std::size_t first = w.history.size() > keep ? w.history.size() - keep : 0;
  for (std::size_t i = first; i < w.history.size(); ++i) add(w.history[i]);
  if (n < 2 || b_min == b_max) return std::nullopt;
  const double denom = n * sbb - sb * sb;
  double beta = (n * sbt - sb * st) / denom;
  double alpha = (st - beta * sb) / n;
  if (alpha < 0.0) alpha = 0.0, beta = sbt / sbb;
  if (!(beta > 0.0) || !std::isfinite(beta)) return std::nullopt;
  return AffineCost{alpha, beta};
}

class AffinePolicy final : public BatchPolicy {
 public:
  explicit AffinePolicy(PolicyOptions options) : options_(std::move(options)), fallback_(options_, false) {}
  std::string_view name() const override { return "affine"; }

  BatchPlan decide(const ClusterSnapshot& s) override {
    LiveSet live(s);
    const std::vector<double> x = estimate_throughputs(s, live);
    if (x.empty()) return fallback_.decide(s);
    // Each worker's model: its fit where it has two distinct batches, else the proportional model t = b / X.
    std::vector<AffineCost> costs(live.index.size());
    bool any_fit = false;
    for (std::size_t i = 0; i < live.index.size(); ++i) {
      const auto fit = fit_affine(s.workers[live.index[i]], options_.fit_window);
      any_fit = any_fit || fit.has_value();
      costs[i] = fit.value_or(AffineCost{0.0, 1.0 / x[i]});
    }
    if (!any_fit) return fallback_.decide(s);
    if (s.mode == TrainingMode::kAsp) {
      // Equal time at the mean predicted time of the current plan; each worker clipped on its own.
      double t_bar = 0.0;
      for (std::size_t i = 0; i < costs.size(); ++i) {
        t_bar += costs[i].alpha + costs[i].beta * static_cast<double>(s.workers[live.index[i]].batch);
      }
      t_bar /= static_cast<double>(costs.size());
      std::vector<BatchSize> dense(costs.size());
      for (std::size_t i = 0; i < costs.size(); ++i) {
        dense[i] = std::clamp(static_cast<BatchSize>(std::llround((t_bar - costs[i].alpha) / costs[i].beta)),
                              live.lo[i], live.hi[i]);
      }
      return live.scatter(s, dense);
    }
    auto cont = solve_equal_time(costs, live.lo, live.hi, static_cast<double>(s.global_batch));
    OMNI_CHECK(cont.is_ok(), cont.status().message());
    return live.scatter(s, round_largest_remainder(*cont, live.lo, live.hi, s.global_batch));
  }

 private:
  PolicyOptions options_;
  OmniLearnPolicy fallback_;
};

class OraclePolicy final : public BatchPolicy {
 public:
  explicit OraclePolicy(PolicyOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "oracle"; }
  BatchPlan decide(const ClusterSnapshot& s) override {
    LiveSet live(s);
    const std::vector<CostFunction> all = options_.true_costs(s);
    OMNI_CHECK(all.size() == s.workers.size(), "oracle: true cost provider returned the wrong number of workers");
    std::vector<CostFunction> costs;
    for (std::size_t k : live.index) costs.push_back(all[k]);
    return live.scatter(s, oracle_plan(costs, live.lo, live.hi, s.global_batch));
  }

 private:
  PolicyOptions options_;
};

}  // namespace

std::vector<BatchSize> oracle_plan(std::span<const CostFunction> costs, std::span<const BatchSize> lo,
                                   std::span<const BatchSize> hi, BatchSize total) {
  std::vector<BatchSize> b(lo.begin(), lo.end());
  BatchSize remaining = total;
  for (BatchSize v : b) remaining -= v;
  // Give each further sample to the worker whose time after taking it is smallest: for non-decreasing costs this
  // minimises the largest time (a classic exchange argument). Ties go to the lower index.
  using Entry = std::pair<Seconds, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (b[k] < hi[k]) heap.emplace(costs[k](b[k] + 1), k);
  }
  while (remaining > 0 && !heap.empty()) {
    const std::size_t k = heap.top().second;
    heap.pop();
    ++b[k];
    --remaining;
    if (b[k] < hi[k]) heap.emplace(costs[k](b[k] + 1), k);
  }
  return b;
}

std::unique_ptr<BatchPolicy> make_uniform_policy() { return std::make_unique<UniformPolicy>(); }
std::unique_ptr<BatchPolicy> make_static_policy() { return std::make_unique<StaticPolicy>(); }
std::unique_ptr<BatchPolicy> make_omnilearn_policy(const PolicyOptions& options) {
  return std::make_unique<OmniLearnPolicy>(options, /*force_asp=*/false);
}
std::unique_ptr<BatchPolicy> make_omnilearn_asp_policy(const PolicyOptions& options) {
  return std::make_unique<OmniLearnPolicy>(options, /*force_asp=*/true);
}
std::unique_ptr<BatchPolicy> make_affine_policy(const PolicyOptions& options) {
  return std::make_unique<AffinePolicy>(options);
}
Result<std::unique_ptr<BatchPolicy>> make_staleness_bounded_policy(const PolicyOptions& options) {
  if (!(options.staleness_bound > 0.0) || !std::isfinite(options.staleness_bound)) {
    return Status::invalid_argument(
        "policy 'staleness-bounded' needs the staleness bound R of workload.asp: {rule: staleness-bounded, "
        "delay_threshold: R} (a finite R >= 1)");
  }
  return std::unique_ptr<BatchPolicy>(std::make_unique<StalenessBoundedPolicy>(options.staleness_bound));
}

std::vector<BatchSize> staleness_bounded_plan(std::span<const double> per_sample_s, std::span<const BatchSize> lo,
                                              std::span<const BatchSize> hi, BatchSize b_ref, double bound) {
  const std::size_t n = per_sample_s.size();
  OMNI_CHECK(lo.size() == n && hi.size() == n, "staleness_bounded_plan: per_sample_s, lo and hi differ in length");
  OMNI_CHECK(b_ref >= 1 && bound > 0.0, "staleness_bounded_plan: needs b_ref >= 1 and bound > 0");
  std::vector<BatchSize> b(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    OMNI_CHECK(lo[k] <= hi[k], "staleness_bounded_plan: lo > hi");
    if (per_sample_s[k] > 0.0) b[k] = std::max(lo[k], std::min(b_ref, hi[k]));
  }
  const auto rate = [&](std::size_t k) { return 1.0 / (per_sample_s[k] * static_cast<double>(b[k])); };
  std::vector<BatchSize> next = b;
  for (bool changed = true; changed;) {
    changed = false;
    double total = 0.0;  // updates per second of every live worker at this round's batches
    for (std::size_t k = 0; k < n; ++k) {
      if (b[k] > 0) total += rate(k);
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (b[k] <= lo[k]) continue;
      const double others = total - rate(k);
      if (others <= 0.0) continue;
      // τ_k = c_k b_k others <= bound; the floor of a huge quotient is capped at b_k (batches only fall).
      const double largest = std::floor(bound / (per_sample_s[k] * others));
      if (largest >= static_cast<double>(b[k])) continue;
      next[k] = std::max(lo[k], static_cast<BatchSize>(largest));
      changed = true;
    }
    b = next;
  }
  return b;
}

Result<std::unique_ptr<BatchPolicy>> make_oracle_policy(const PolicyOptions& options) {
  if (!options.true_costs) {
    return Status::invalid_argument("policy 'oracle' needs the true cost functions, which only the simulator has");
  }
  return std::unique_ptr<BatchPolicy>(std::make_unique<OraclePolicy>(options));
}

}  // namespace omnilearn::controller
