#include "omnilearn/hybrid/sailor_check.h"

#include <algorithm>
#include <memory>

#include "omnilearn/hybrid/hybrid_step.h"

namespace omnilearn::hybrid {

namespace {

Result<PlanCheck> check_one(const traces::SailorPlan& p, const traces::LayerCostTable& table,
                            const traces::SailorNetwork& network, const traces::SailorKind& kind) {
  PlanCheck check;
  check.plan = p;
  HybridCluster cluster;
  DeviceKind k;
  k.name = p.kind;
  k.memory_bytes = kind.memory_bytes;
  k.gpus_per_node = kind.gpus_per_node;
  cluster.nodes = p.nodes;
  for (std::int64_t d = 0; d < p.nodes * kind.gpus_per_node; ++d) cluster.devices.push_back({0, d / kind.gpus_per_node});
  auto source = make_profile_source(std::make_shared<const traces::LayerCostTable>(table), p.model);
  if (!source.is_ok()) return source.status();
  HybridPlan plan;
  plan.shape = {p.dp, p.pp, p.tp};
  plan.micro_batch = p.micro_batch;
  std::vector<std::int64_t> layers;
  for (const traces::LayerRange& r : p.stages) layers.push_back(r.last - r.first + 1);
  plan.layers.assign(static_cast<std::size_t>(p.dp), layers);
  plan.micro_batches.assign(static_cast<std::size_t>(p.dp), p.global_batch / p.micro_batch / p.dp);
  std::vector<std::int64_t> all(cluster.devices.size());
  for (std::size_t d = 0; d < all.size(); ++d) all[d] = static_cast<std::int64_t>(d);
  cluster.kinds.push_back(k);
  auto group = default_layout(cluster, plan.shape, all);
  if (!group.is_ok()) return group.status();
  plan.group = std::move(group).value();
  if (Status st = validate_plan(plan, cluster, (*source)->layer_count(), p.global_batch); !st) {
    check.refused = st.message();
    return check;
  }
  auto costs = StageCosts::build(**source, cluster, p.micro_batch, p.tp);
  if (!costs.is_ok()) return costs.status();
  // Sailor's fitted bandwidths (their polynomial in the message size): inside a node among the TP group's GPUs, across
  // nodes one GPU to one, evaluated at the size of the gradients' all-reduce chunks (the largest stage's / dp).
  double largest = 0.0;
  std::int64_t first = 0;
  for (std::int64_t count : layers) {
    largest = std::max(largest, costs->params(first, count) * 4.0);
    first += count;
  }
  const double chunk = std::max(largest / static_cast<double>(std::max<std::int64_t>(p.dp, 1)), 1e6);
  auto inter = network.bandwidth_bytes_per_s(p.kind, traces::NetworkScope::kInter, 1, chunk);
  auto intra = network.bandwidth_bytes_per_s(p.kind, traces::NetworkScope::kIntra, std::min<std::int64_t>(p.tp, 4), chunk);
  if (!inter.is_ok()) return inter.status();
  cluster.network.inter_node_bytes_per_s = *inter;
  cluster.kinds[0].intra_node_bytes_per_s = intra.is_ok() ? *intra : *inter;
  StepConditions now;
  now.speed.assign(cluster.devices.size(), 1.0);
  now.node_link.assign(static_cast<std::size_t>(cluster.nodes), 1.0);
  auto step = simulate_step(plan, cluster, *costs, now);
  if (!step.is_ok()) return step.status();
  check.predicted_s = step->step_s;
  check.error = step->step_s / p.measured_iteration_s - 1.0;
  for (const DeviceMemory& m : plan_memory(plan, cluster, *costs)) {
    check.predicted_memory_bytes = std::max(check.predicted_memory_bytes, m.total());
  }
  return check;
}

}  // namespace

Result<std::vector<PlanCheck>> check_sailor_plans(const std::vector<traces::SailorPlan>& plans,
                                                  const traces::LayerCostTable& costs,
                                                  const traces::SailorNetwork& network,
                                                  const std::vector<traces::SailorKind>& kinds) {
  std::vector<PlanCheck> out;
  for (const traces::SailorPlan& p : plans) {
    auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const traces::SailorKind& k) { return k.kind == p.kind; });
    if (kind == kinds.end()) return Status::not_found(p.file + ": kind " + p.kind + " is not in the kinds table");
    auto check = check_one(p, costs, network, *kind);
    if (!check.is_ok()) return check.status().with_context(p.file);
    out.push_back(std::move(check).value());
  }
  return out;
}

}  // namespace omnilearn::hybrid
