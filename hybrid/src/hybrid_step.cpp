#include "omnilearn/hybrid/hybrid_step.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace omnilearn::hybrid {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

const Device& device_of(const HybridCluster& cluster, std::int64_t d) {
  return cluster.devices[static_cast<std::size_t>(d)];
}

// Seconds of layers [first, first + count) on the TP group of (replica, stage): its slowest member's.
template <typename Sum>
Seconds group_seconds(const HybridPlan& plan, std::int64_t replica, std::int64_t stage, const HybridCluster& cluster,
                      const StepConditions& conditions, Sum sum) {
  Seconds worst = 0.0;
  for (std::int64_t t = 0; t < plan.shape.tp; ++t) {
    const std::int64_t d = plan.device_at(replica, stage, t);
    const double speed = conditions.speed[static_cast<std::size_t>(d)];
    worst = std::max(worst, sum(device_of(cluster, d).kind) / speed);
  }
  return worst;
}

// Bandwidth between devices a and b: NVLink inside a node, else the slower end's share of the network.
double link_bytes_per_s(const HybridCluster& cluster, const StepConditions& conditions, std::int64_t a,
                        std::int64_t b) {
  const Device& da = device_of(cluster, a);
  const Device& db = device_of(cluster, b);
  if (da.node == db.node) return cluster.kinds[static_cast<std::size_t>(da.kind)].intra_node_bytes_per_s;
  const double factor = std::min(conditions.node_link[static_cast<std::size_t>(da.node)],
                                 conditions.node_link[static_cast<std::size_t>(db.node)]);
  return cluster.network.inter_node_bytes_per_s * factor;
}

struct Segment {
  Seconds ready_s = 0.0;
  Seconds duration_s = 0.0;
};

// Gradient all-reduces, as segments of layers held by one stage in every replica: per (replica x pp + stage), when
// each of its segments may start (every replica's holder has run its last backward) and how long its ring takes.
std::vector<std::vector<Segment>> gradient_allreduces(const HybridPlan& plan, const HybridCluster& cluster,
                                                      const StageCosts& costs, const StepConditions& conditions,
                                                      const StepOptions& options, const HybridStep& step) {
  std::vector<std::int64_t> cuts;
  for (std::int64_t r = 0; r < plan.shape.dp; ++r) {
    std::int64_t first = 0;
    for (std::int64_t count : plan.layers[static_cast<std::size_t>(r)]) {
      cuts.push_back(first);
      first += count;
    }
  }
  cuts.push_back(costs.layer_count());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // [replica x pp + stage] -> its segments
  std::vector<std::vector<Segment>> held(static_cast<std::size_t>(plan.shape.dp * plan.shape.pp));
  std::vector<std::int64_t> holder(static_cast<std::size_t>(plan.shape.dp));
  if (plan.shape.dp > 1) {
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const std::int64_t a = cuts[c], count = cuts[c + 1] - cuts[c];
      Seconds ready = 0.0;
      for (std::int64_t r = 0; r < plan.shape.dp; ++r) {
        const auto& l = plan.layers[static_cast<std::size_t>(r)];
        std::int64_t j = 0, end = l[0];
        while (end <= a) end += l[static_cast<std::size_t>(++j)];
        holder[static_cast<std::size_t>(r)] = j % plan.shape.pp;
        ready = std::max(ready, step.pipelines[static_cast<std::size_t>(r)]
                                    .stages[static_cast<std::size_t>(j % plan.shape.pp)]
                                    .last_end_s);
      }
      double bandwidth = 0.0;
      for (std::int64_t r = 0; r < plan.shape.dp; ++r) {
        const std::int64_t dr = plan.device_at(r, holder[static_cast<std::size_t>(r)], 0);
        const std::int64_t next = plan.device_at((r + 1) % plan.shape.dp, holder[static_cast<std::size_t>((r + 1) % plan.shape.dp)], 0);
        const double bw = link_bytes_per_s(cluster, conditions, dr, next);
        bandwidth = r == 0 ? bw : std::min(bandwidth, bw);
      }
      const Seconds duration = ring_allreduce_s(plan.shape.dp, costs.params(a, count) * options.grad_bytes_per_param,
                                                bandwidth, cluster.network.latency_s);
      for (std::int64_t r = 0; r < plan.shape.dp; ++r) {
        held[static_cast<std::size_t>(r * plan.shape.pp + holder[static_cast<std::size_t>(r)])].push_back({ready, duration});
      }
    }
  }
  return held;
}

}  // namespace

ReplicaTimes replica_times(const HybridPlan& plan, std::int64_t replica, const HybridCluster& cluster,
                           const StageCosts& costs, const StepConditions& conditions) {
  const std::int64_t vs = plan.virtual_stages();
  ReplicaTimes t;
  t.forward_s.reserve(static_cast<std::size_t>(vs));
  t.backward_s.reserve(static_cast<std::size_t>(vs));
  const auto& layers = plan.layers[static_cast<std::size_t>(replica)];
  std::int64_t first = 0;
  for (std::int64_t j = 0; j < vs; ++j) {
    const std::int64_t stage = j % plan.shape.pp;
    const std::int64_t count = layers[static_cast<std::size_t>(j)];
    t.forward_s.push_back(group_seconds(plan, replica, stage, cluster, conditions,
                                        [&](std::int64_t k) { return costs.forward_s(k, first, count); }));
    t.backward_s.push_back(group_seconds(plan, replica, stage, cluster, conditions,
                                         [&](std::int64_t k) { return costs.backward_s(k, first, count); }));
    first += count;
    if (j + 1 == vs) break;
    const std::int64_t a = plan.device_at(replica, stage, 0);
    const std::int64_t b = plan.device_at(replica, (j + 1) % plan.shape.pp, 0);
    Seconds send = 0.0;
    if (a != b) {
      send = cluster.network.latency_s +
             costs.output_bytes(first - 1) / link_bytes_per_s(cluster, conditions, a, b);
    }
    t.send_forward_s.push_back(send);
    t.send_backward_s.push_back(send);
  }
  return t;
}

Result<HybridStep> simulate_step(const HybridPlan& plan, const HybridCluster& cluster, const StageCosts& costs,
                                 const StepConditions& conditions, const StepOptions& options) {
  const HybridShape& shape = plan.shape;
  if (conditions.speed.size() != cluster.devices.size() ||
      conditions.node_link.size() != static_cast<std::size_t>(cluster.nodes)) {
    return Status::invalid_argument("step conditions: one speed per device and one link factor per node expected");
  }
  HybridStep step;
  step.device.assign(cluster.devices.size(), DeviceTime{});
  step.allreduce_end_s.assign(cluster.devices.size(), 0.0);
  step.stage_compute_s.assign(static_cast<std::size_t>(shape.dp), std::vector<Seconds>(static_cast<std::size_t>(shape.pp), 0.0));
  for (std::int64_t r = 0; r < shape.dp; ++r) {
    for (std::int64_t s = 0; s < shape.pp; ++s) {
      for (std::int64_t t = 0; t < shape.tp; ++t) {
        if (!(conditions.speed[static_cast<std::size_t>(plan.device_at(r, s, t))] > 0.0)) {
          return Status::invalid_argument("step conditions: device " + str(plan.device_at(r, s, t)) +
                                          " is in the plan with speed <= 0");
        }
      }
    }
    auto pipeline = run_pipeline(plan.schedule, plan.micro_batches[static_cast<std::size_t>(r)],
                                 replica_times(plan, r, cluster, costs, conditions), options.keep_ops);
    if (!pipeline.is_ok()) return pipeline.status().with_context("replica " + str(r));
    step.replica_s.push_back(pipeline->makespan_s);
    for (std::int64_t s = 0; s < shape.pp; ++s) {
      step.stage_compute_s[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)] =
          pipeline->stages[static_cast<std::size_t>(s)].compute_s;
    }
    step.pipelines.push_back(std::move(pipeline).value());
  }

  auto held = gradient_allreduces(plan, cluster, costs, conditions, options, step);
  for (std::int64_t r = 0; r < shape.dp; ++r) {
    const auto& l = plan.layers[static_cast<std::size_t>(r)];
    for (std::int64_t s = 0; s < shape.pp; ++s) {
      const StageActivity& a = step.pipelines[static_cast<std::size_t>(r)].stages[static_cast<std::size_t>(s)];
      auto& segments = held[static_cast<std::size_t>(r * shape.pp + s)];
      std::stable_sort(segments.begin(), segments.end(),
                       [](const Segment& x, const Segment& y) { return x.ready_s < y.ready_s; });
      Seconds at = a.last_end_s, comm = 0.0;
      for (const Segment& seg : segments) {
        at = std::max(at, seg.ready_s) + seg.duration_s;
        comm += seg.duration_s;
      }
      Seconds update = 0.0;
      std::int64_t first = 0;
      for (std::int64_t j = 0; j < plan.virtual_stages(); ++j) {
        const std::int64_t count = l[static_cast<std::size_t>(j)];
        if (j % shape.pp == s) {
          update += group_seconds(plan, r, s, cluster, conditions,
                                  [&](std::int64_t k) { return costs.update_s(k, first, count); });
        }
        first += count;
      }
      for (std::int64_t t = 0; t < shape.tp; ++t) {
        const auto d = static_cast<std::size_t>(plan.device_at(r, s, t));
        step.allreduce_end_s[d] = at;
        step.device[d] = {a.compute_s + update, a.last_end_s - a.compute_s, comm, 0.0};
        step.step_s = std::max(step.step_s, at + update);
      }
    }
  }
  for (std::int64_t d : plan.group) {
    DeviceTime& t = step.device[static_cast<std::size_t>(d)];
    t.wait_s = std::max(0.0, step.step_s - t.compute_s - t.bubble_s - t.comm_s);
  }
  return step;
}

std::vector<DeviceMemory> plan_memory(const HybridPlan& plan, const HybridCluster& cluster, const StageCosts& costs,
                                      const MemoryOptions& options) {
  std::vector<DeviceMemory> memory(cluster.devices.size());
  const HybridShape& shape = plan.shape;
  for (std::int64_t r = 0; r < shape.dp; ++r) {
    const auto& l = plan.layers[static_cast<std::size_t>(r)];
    for (std::int64_t s = 0; s < shape.pp; ++s) {
      DeviceMemory m;
      std::vector<double> chunk_activations(static_cast<std::size_t>(plan.schedule.chunks), 0.0);
      std::int64_t first = 0;
      for (std::int64_t j = 0; j < plan.virtual_stages(); ++j) {
        const std::int64_t count = l[static_cast<std::size_t>(j)];
        if (j % shape.pp == s) {
          m.state_bytes += costs.params(first, count) * options.state_bytes_per_param;
          chunk_activations[static_cast<std::size_t>(j / shape.pp)] = costs.activation_bytes(first, count);
        }
        first += count;
      }
      auto order = stage_order(plan.schedule, shape.pp, s, plan.micro_batches[static_cast<std::size_t>(r)]);
      if (order.is_ok()) {
        double live = 0.0;
        std::int64_t passes = 0;
        for (const PipelineOp& op : *order) {
          const double a = chunk_activations[static_cast<std::size_t>(op.chunk)];
          const bool forward = op.pass == PassKind::kForward;
          live += forward ? a : -a;
          passes += forward ? 1 : -1;
          if (live > m.activation_bytes) m.activation_bytes = live;
          m.in_flight = std::max(m.in_flight, passes);
        }
      }
      for (std::int64_t t = 0; t < shape.tp; ++t) memory[static_cast<std::size_t>(plan.device_at(r, s, t))] = m;
    }
  }
  return memory;
}

Status check_memory(const HybridPlan& plan, const HybridCluster& cluster, const StageCosts& costs,
                    const MemoryOptions& options) {
  const auto memory = plan_memory(plan, cluster, costs, options);
  for (std::int64_t r = 0; r < plan.shape.dp; ++r) {
    for (std::int64_t s = 0; s < plan.shape.pp; ++s) {
      const std::int64_t d = plan.device_at(r, s, 0);
      const DeviceMemory& m = memory[static_cast<std::size_t>(d)];
      const DeviceKind& kind = cluster.kinds[static_cast<std::size_t>(device_of(cluster, d).kind)];
      if (m.total() <= kind.memory_bytes) continue;
      char text[320];
      std::snprintf(text, sizeof text,
                    "the plan does not fit: device %lld (%s, replica %lld stage %lld) needs %.1f GB (weights and "
                    "optimizer state %.1f GB, activations of %lld micro-batches %.1f GB), its kind holds %.1f GB",
                    static_cast<long long>(d), kind.name.c_str(), static_cast<long long>(r),
                    static_cast<long long>(s), m.total() / 1e9, m.state_bytes / 1e9,
                    static_cast<long long>(m.in_flight), m.activation_bytes / 1e9, kind.memory_bytes / 1e9);
      return Status::invalid_argument(text);
    }
  }
  return Status::ok();
}

}  // namespace omnilearn::hybrid
