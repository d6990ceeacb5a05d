#include "omnilearn/hybrid/hybrid_planner.h"

#include <algorithm>
#include <map>
#include <string>

#include "omnilearn/controller/allocation.h"

namespace omnilearn::hybrid {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

// The unit micro-batches move in: one, or a group of pp for interleaved plans.
std::int64_t unit_of(const HybridPlan& plan) {
  return plan.schedule.kind == ScheduleKind::kInterleaved ? plan.shape.pp : 1;
}

}  // namespace

Result<std::vector<std::int64_t>> balance_micro_batches(const HybridPlan& plan, const HybridCluster& cluster,
                                                        const StageCosts& costs, const StepConditions& conditions) {
  const std::int64_t unit = unit_of(plan);
  std::int64_t total = 0;
  for (std::int64_t m : plan.micro_batches) total += m;
  const std::int64_t units = total / unit;
  std::vector<controller::AffineCost> affine;
  for (std::int64_t r = 0; r < plan.shape.dp; ++r) {
    const ReplicaTimes times = replica_times(plan, r, cluster, costs, conditions);
    // Two points of T_r(m) at m = k and 2k units (k large enough to fill the pipeline): 1F1B's T is affine there.
    const std::int64_t k = std::max<std::int64_t>(plan.shape.pp, 1) * unit;
    auto t1 = run_pipeline(plan.schedule, k, times);
    auto t2 = run_pipeline(plan.schedule, 2 * k, times);
    if (!t1.is_ok()) return t1.status();
    if (!t2.is_ok()) return t2.status();
    const double beta = (t2->makespan_s - t1->makespan_s) / static_cast<double>(k / unit);
    affine.push_back({t1->makespan_s - beta * static_cast<double>(k / unit), std::max(beta, 1e-12)});
  }
  const std::vector<BatchSize> lo(static_cast<std::size_t>(plan.shape.dp), 1);
  const std::vector<BatchSize> hi(static_cast<std::size_t>(plan.shape.dp), units);
  auto x = controller::solve_equal_time(affine, lo, hi, static_cast<double>(units));
  if (!x.is_ok()) return x.status();
  const auto rounded = controller::round_largest_remainder(*x, lo, hi, units);
  std::vector<std::int64_t> m;
  for (BatchSize u : rounded) m.push_back(static_cast<std::int64_t>(u) * unit);
  return m;
}

std::vector<std::int64_t> balance_layers(const HybridPlan& plan, std::int64_t replica, const HybridCluster& cluster,
                                         const StageCosts& costs, const StepConditions& conditions,
                                         const MemoryOptions& memory) {
  const std::int64_t vs = plan.virtual_stages(), layers = costs.layer_count();
  const auto& current = plan.layers[static_cast<std::size_t>(replica)];
  if (vs > layers) return current;
  // Per virtual stage: its TP group's slowest member, as (kind, speed) pairs; and the group's memory.
  struct Member {
    std::int64_t kind;
    double speed;
    double memory_bytes;
  };
  std::vector<std::vector<Member>> members(static_cast<std::size_t>(vs));
  for (std::int64_t j = 0; j < vs; ++j) {
    for (std::int64_t t = 0; t < plan.shape.tp; ++t) {
      const std::int64_t d = plan.device_at(replica, j % plan.shape.pp, t);
      const Device& dev = cluster.devices[static_cast<std::size_t>(d)];
      members[static_cast<std::size_t>(j)].push_back({dev.kind, conditions.speed[static_cast<std::size_t>(d)],
                                                      cluster.kinds[static_cast<std::size_t>(dev.kind)].memory_bytes});
    }
  }
  auto seconds = [&](std::int64_t j, std::int64_t first, std::int64_t count) {
    Seconds worst = 0.0;
    for (const Member& m : members[static_cast<std::size_t>(j)]) {
      worst = std::max(worst, (costs.forward_s(m.kind, first, count) + costs.backward_s(m.kind, first, count)) / m.speed);
    }
    return worst;
  };
  // A stage's chunks share its memory: each virtual stage may use 1 / chunks of it for its weights and state.
  auto fits = [&](std::int64_t j, std::int64_t first, std::int64_t count) {
    const double state = costs.params(first, count) * memory.state_bytes_per_param;
    for (const Member& m : members[static_cast<std::size_t>(j)]) {
      if (state > m.memory_bytes / static_cast<double>(plan.schedule.chunks)) return false;
    }
    return true;
  };
  // The greedy cover under a bottleneck `limit`: each stage takes as many layers as it can.
  auto cover = [&](Seconds limit, std::vector<std::int64_t>* out) {
    std::int64_t first = 0;
    for (std::int64_t j = 0; j < vs; ++j) {
      const std::int64_t left_for_others = vs - j - 1;
      std::int64_t count = 0;
      while (first + count + 1 <= layers - left_for_others && seconds(j, first, count + 1) <= limit &&
             fits(j, first, count + 1)) {
        ++count;
      }
      if (j + 1 == vs && first + count != layers) return false;
      if (count == 0) return false;
      if (out != nullptr) out->push_back(count);
      first += count;
    }
    return first == layers;
  };
  Seconds lo = 0.0, hi = 0.0;
  for (std::int64_t j = 0; j < vs; ++j) hi = std::max(hi, seconds(j, 0, layers));
  if (!cover(hi, nullptr)) return current;
  for (int i = 0; i < 60; ++i) {
    const Seconds mid = 0.5 * (lo + hi);
    (cover(mid, nullptr) ? hi : lo) = mid;
  }
  std::vector<std::int64_t> best;
  if (!cover(hi, &best)) return current;
  return best;
}

Result<PlannedJob> plan_shape(const HybridCluster& cluster, const std::vector<std::int64_t>& live,
                              const StepConditions& conditions, const PlannerOptions& options, const HybridShape& shape,
                              const StageCosts& costs) {
  const std::int64_t total = options.global_batch / options.micro_batch;
  if (total * options.micro_batch != options.global_batch) {
    return Status::invalid_argument("global batch " + str(options.global_batch) + " is not a multiple of micro_batch " +
                                    str(options.micro_batch));
  }
  HybridPlan plan;
  plan.shape = shape;
  plan.schedule = options.schedule;
  plan.micro_batch = options.micro_batch;
  const std::int64_t unit = unit_of(plan);
  if (total % unit != 0 || total / unit < shape.dp) {
    return Status::invalid_argument("the global batch gives " + str(total) + " micro-batches, too few for " +
                                    str(shape.dp) + " replicas in units of " + str(unit));
  }
  // TP groups inside nodes, each node's devices fastest first; a group's rate is its slowest member's.
  auto rate = [&](std::int64_t d) {
    const Device& dev = cluster.devices[static_cast<std::size_t>(d)];
    const Seconds full = costs.forward_s(dev.kind, 0, costs.layer_count()) + costs.backward_s(dev.kind, 0, costs.layer_count());
    return conditions.speed[static_cast<std::size_t>(d)] / full;
  };
  std::map<std::int64_t, std::vector<std::int64_t>> by_node;
  for (std::int64_t d : live) by_node[cluster.devices[static_cast<std::size_t>(d)].node].push_back(d);
  std::vector<std::pair<double, std::vector<std::int64_t>>> groups;
  for (auto& [node, devices] : by_node) {
    std::stable_sort(devices.begin(), devices.end(), [&](std::int64_t a, std::int64_t b) { return rate(a) > rate(b); });
    for (std::size_t g = 0; g + static_cast<std::size_t>(shape.tp) <= devices.size(); g += static_cast<std::size_t>(shape.tp)) {
      std::vector<std::int64_t> members(devices.begin() + static_cast<std::ptrdiff_t>(g),
                                        devices.begin() + static_cast<std::ptrdiff_t>(g) + shape.tp);
      const auto kind = cluster.devices[static_cast<std::size_t>(members[0])].kind;
      if (shape.tp > cluster.kinds[static_cast<std::size_t>(kind)].gpus_per_node) continue;
      groups.emplace_back(rate(members.back()), std::move(members));
    }
  }
  const std::int64_t needed = shape.dp * shape.pp;
  if (static_cast<std::int64_t>(groups.size()) < needed) {
    return Status::invalid_argument("the shape needs " + str(needed) + " TP groups of " + str(shape.tp) +
                                    ", the live devices form " + str(static_cast<std::int64_t>(groups.size())));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  plan.group.assign(static_cast<std::size_t>(shape.devices()), -1);
  for (std::int64_t k = 0; k < needed; ++k) {
    const std::int64_t round = k / shape.dp, pos = k % shape.dp;
    const std::int64_t replica = round % 2 == 0 ? pos : shape.dp - 1 - pos;
    for (std::int64_t t = 0; t < shape.tp; ++t) {
      plan.group[static_cast<std::size_t>((replica * shape.pp + round) * shape.tp + t)] =
          groups[static_cast<std::size_t>(k)].second[static_cast<std::size_t>(t)];
    }
  }
  if (plan.virtual_stages() > costs.layer_count()) {
    return Status::invalid_argument("pp x chunks = " + str(plan.virtual_stages()) + " stages for " +
                                    str(costs.layer_count()) + " layers");
  }
  plan.layers.assign(static_cast<std::size_t>(shape.dp), even_layers(costs.layer_count(), plan.virtual_stages()));
  plan.micro_batches.assign(static_cast<std::size_t>(shape.dp), 0);
  const auto even = even_micro_batches(total / unit, shape.dp);
  for (std::size_t r = 0; r < even.size(); ++r) plan.micro_batches[r] = even[r] * unit;
  for (std::int64_t r = 0; r < shape.dp; ++r) {
    plan.layers[static_cast<std::size_t>(r)] = balance_layers(plan, r, cluster, costs, conditions, options.memory);
  }
  auto m = balance_micro_batches(plan, cluster, costs, conditions);
  if (!m.is_ok()) return m.status();
  plan.micro_batches = std::move(m).value();
  OMNI_RETURN_IF_ERROR(check_memory(plan, cluster, costs, options.memory));
  auto step = simulate_step(plan, cluster, costs, conditions, options.step);
  if (!step.is_ok()) return step.status();
  return PlannedJob{std::move(plan), step->step_s};
}

}  // namespace omnilearn::hybrid
