#include "omnilearn/hybrid/megatron_check.h"

#include <algorithm>
#include <cmath>

#include "omnilearn/hybrid/hybrid_step.h"

namespace omnilearn::hybrid {

namespace {

// The shorthand, with a recomputed forward added to every backward under full recomputation.
class RecomputeSource final : public LayerCostSource {
 public:
  RecomputeSource(std::unique_ptr<LayerCostSource> inner, bool full) : inner_(std::move(inner)), full_(full) {}
  std::int64_t layer_count() const override { return inner_->layer_count(); }
  Result<traces::LayerCost> cost(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp,
                                 std::int64_t layer) const override {
    auto c = inner_->cost(kind, micro_batch, tp, layer);
    if (c.is_ok() && full_) c->backward_s += c->forward_s;
    return c;
  }
  Result<traces::LayerSize> size(std::int64_t tp, std::int64_t layer) const override { return inner_->size(tp, layer); }
  Seconds tp_collective_s(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp, std::int64_t layer,
                          Seconds latency_s) const override {
    return inner_->tp_collective_s(kind, micro_batch, tp, layer, latency_s);
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<LayerCostSource> inner_;
  bool full_;
};

Result<Seconds> predict(const traces::PublishedRun& run, double efficiency) {
  auto inner = make_transformer_source({run.hidden, run.layers, run.seq, run.vocab});
  if (!inner.is_ok()) return inner.status();
  const RecomputeSource source(std::move(inner).value(), run.recompute == traces::Recompute::kFull);
  HybridCluster cluster;
  DeviceKind a100;
  a100.name = "A100";
  a100.memory_bytes = 80e9;
  a100.gpus_per_node = 8;
  a100.peak_flops = run.peak_flops;
  a100.efficiency = efficiency;
  a100.intra_node_bytes_per_s = 300e9;  // NVLink 3: 600 GB/s both ways
  cluster.kinds.push_back(a100);
  cluster.network.inter_node_bytes_per_s = 25e9;  // one 200 Gb/s HDR port per GPU
  cluster.network.latency_s = 5e-6;
  cluster.nodes = (run.gpus + 7) / 8;
  for (std::int64_t d = 0; d < run.gpus; ++d) cluster.devices.push_back({0, d / 8});
  HybridPlan plan;
  plan.shape = {run.dp, run.pp, run.tp};
  plan.micro_batch = run.micro_batch.value_or(1);
  std::vector<std::int64_t> all(cluster.devices.size());
  for (std::size_t d = 0; d < all.size(); ++d) all[d] = static_cast<std::int64_t>(d);
  auto group = default_layout(cluster, plan.shape, all);
  if (!group.is_ok()) return group.status();
  plan.group = std::move(group).value();
  plan.layers.assign(static_cast<std::size_t>(run.dp), even_layers(source.layer_count(), run.pp));
  plan.micro_batches.assign(static_cast<std::size_t>(run.dp), run.global_batch / plan.micro_batch / run.dp);
  OMNI_RETURN_IF_ERROR(validate_plan(plan, cluster, source.layer_count(), run.global_batch));
  auto costs = StageCosts::build(source, cluster, plan.micro_batch, run.tp);
  if (!costs.is_ok()) return costs.status();
  StepConditions now;
  now.speed.assign(cluster.devices.size(), 1.0);
  now.node_link.assign(static_cast<std::size_t>(cluster.nodes), 1.0);
  StepOptions options;
  options.grad_bytes_per_param = 4.0;
  auto step = simulate_step(plan, cluster, *costs, now, options);
  if (!step.is_ok()) return step.status();
  return step->step_s;
}

}  // namespace

Result<double> HybridEfficiencyFit::at(std::int64_t width) const {
  if (width <= 0) return Status::invalid_argument("a per-GPU width must be positive");
  const double x = static_cast<double>(width);
  return peak * x / (x + half_width);
}

namespace {

// The efficiency at which `run` is predicted to take exactly its published time (bisection: compute scales with
// 1 / efficiency, communication does not, so the prediction falls as the efficiency rises).
Result<double> efficiency_matching(const traces::PublishedRun& run) {
  double lo = 0.02, hi = 1.0;
  for (int k = 0; k < 50; ++k) {
    const double mid = 0.5 * (lo + hi);
    auto t = predict(run, mid);
    if (!t.is_ok()) return t.status();
    (*t > run.iteration_s ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::int64_t width_of(const traces::PublishedRun& run) { return run.hidden / std::max<std::int64_t>(run.tp, 1); }

}  // namespace

Result<MegatronCheck> check_megatron_runs(const std::vector<traces::PublishedRun>& runs,
                                          const std::vector<std::size_t>& fit_rows) {
  if (fit_rows.empty() || fit_rows.size() > 2) return Status::invalid_argument("fit on one or two rows");
  MegatronCheck check;
  std::vector<double> matched;
  for (std::size_t i : fit_rows) {
    if (i >= runs.size()) return Status::invalid_argument("fit row " + std::to_string(i) + " is not in the table");
    auto e = efficiency_matching(runs[i]);
    if (!e.is_ok()) return e.status().with_context(runs[i].source + " " + runs[i].model);
    matched.push_back(*e);
  }
  // One row: a constant efficiency. Two rows of different per-GPU widths x = hidden / tp: e(x) = peak x / (x + x0)
  // through both (wider matrices keep the GPU busier), when that curve exists; else their mean, constant.
  check.fit.peak = matched[0];
  if (fit_rows.size() == 2) {
    const double x1 = static_cast<double>(width_of(runs[fit_rows[0]]));
    const double x2 = static_cast<double>(width_of(runs[fit_rows[1]]));
    const double r = matched[0] / matched[1];
    const double x0 = x1 != x2 ? x1 * x2 * (1.0 - r) / (r * x2 - x1) : -1.0;
    if (x0 > 0.0 && std::isfinite(x0)) {
      check.fit.half_width = x0;
      check.fit.peak = matched[0] * (x1 + x0) / x1;
    } else {
      check.fit.peak = 0.5 * (matched[0] + matched[1]);
    }
  }
  if (check.fit.half_width == 0.0) check.efficiency = check.fit.peak;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto e = check.fit.at(width_of(runs[i]));
    if (!e.is_ok()) return e.status();
    auto t = predict(runs[i], std::min(*e, 1.0));
    if (!t.is_ok()) return t.status().with_context(runs[i].source + " " + runs[i].model);
    PublishedCheck row;
    row.run = runs[i];
    row.fitted = std::find(fit_rows.begin(), fit_rows.end(), i) != fit_rows.end();
    row.efficiency = *e;
    row.predicted_s = *t;
    row.error = *t / runs[i].iteration_s - 1.0;
    check.rows.push_back(std::move(row));
  }
  return check;
}

}  // namespace omnilearn::hybrid
