#include "omnilearn/hybrid/hybrid_job.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace omnilearn::hybrid {

namespace {
std::string str(std::int64_t v) { return std::to_string(v); }
// Every device named once and existing; each TP group on one node no larger than its kind's.
Status validate_group(const HybridPlan& plan, const HybridCluster& cluster) {
  const HybridShape& s = plan.shape;
  const auto n = static_cast<std::int64_t>(cluster.devices.size());
  std::vector<bool> used(static_cast<std::size_t>(n), false);
  for (std::int64_t r = 0; r < s.dp; ++r) {
    for (std::int64_t st = 0; st < s.pp; ++st) {
      const std::string where = "replica " + str(r) + " stage " + str(st);
      std::int64_t node = -1;
      for (std::int64_t t = 0; t < s.tp; ++t) {
        const std::int64_t d = plan.device_at(r, st, t);
        if (d < 0 || d >= n) {
          return Status::invalid_argument("group: " + where + " names device " + str(d) + ", the cluster has " +
                                          str(n));
        }
        if (used[static_cast<std::size_t>(d)]) {
          return Status::invalid_argument("group: device " + str(d) + " is named twice (again at " + where + ")");
        }
        used[static_cast<std::size_t>(d)] = true;
        const Device& dev = cluster.devices[static_cast<std::size_t>(d)];
        const DeviceKind& kind = cluster.kinds[static_cast<std::size_t>(dev.kind)];
        if (s.tp > kind.gpus_per_node) {
          return Status::invalid_argument("shape: tp " + str(s.tp) + " is larger than a node of " + kind.name + " (" +
                                          str(kind.gpus_per_node) + " GPUs); tensor parallelism stays inside a node");
        }
        if (node >= 0 && dev.node != node) {
          return Status::invalid_argument("group: the TP group of " + where + " spans nodes " + str(node) + " and " +
                                          str(dev.node) + "; tensor parallelism stays inside a node");
        }
        node = dev.node;
      }
    }
  }
  return Status::ok();
}

}  // namespace

std::int64_t HybridPlan::first_layer(std::int64_t replica, std::int64_t j) const {
  const auto& l = layers[static_cast<std::size_t>(replica)];
  return std::accumulate(l.begin(), l.begin() + j, std::int64_t{0});
}

Status validate_plan(const HybridPlan& plan, const HybridCluster& cluster, std::int64_t layer_count,
                     std::int64_t global_batch) {
  const HybridShape& s = plan.shape;
  if (s.dp < 1 || s.pp < 1 || s.tp < 1) {
    return Status::invalid_argument("shape: dp, pp and tp must be >= 1 (got " + str(s.dp) + " x " + str(s.pp) +
                                    " x " + str(s.tp) + ")");
  }
  if (plan.micro_batch < 1) return Status::invalid_argument("micro_batch must be >= 1, got " + str(plan.micro_batch));
  if (static_cast<std::int64_t>(plan.group.size()) != s.devices()) {
    return Status::invalid_argument("group: names " + str(static_cast<std::int64_t>(plan.group.size())) +
                                    " devices, the shape " + str(s.dp) + " x " + str(s.pp) + " x " + str(s.tp) +
                                    " needs " + str(s.devices()));
  }
  OMNI_RETURN_IF_ERROR(validate_group(plan, cluster));
  if (static_cast<std::int64_t>(plan.layers.size()) != s.dp) {
    return Status::invalid_argument("layers: " + str(static_cast<std::int64_t>(plan.layers.size())) +
                                    " replicas listed, dp is " + str(s.dp));
  }
  for (std::int64_t r = 0; r < s.dp; ++r) {
    const auto& l = plan.layers[static_cast<std::size_t>(r)];
    if (static_cast<std::int64_t>(l.size()) != plan.virtual_stages()) {
      return Status::invalid_argument("layers[" + str(r) + "]: " + str(static_cast<std::int64_t>(l.size())) +
                                      " stages listed, the plan has " + str(plan.virtual_stages()) +
                                      " (pp x chunks)");
    }
    std::int64_t sum = 0;
    for (std::size_t j = 0; j < l.size(); ++j) {
      if (l[j] < 1) {
        return Status::invalid_argument("layers[" + str(r) + "][" + str(static_cast<std::int64_t>(j)) +
                                        "]: a stage holds no layer; each needs >= 1");
      }
      sum += l[j];
    }
    if (sum != layer_count) {
      return Status::invalid_argument("layers[" + str(r) + "]: the stages hold " + str(sum) +
                                      " layers, the model has " + str(layer_count) +
                                      " (embedding and head included); the plan must cover it once");
    }
  }
  if (static_cast<std::int64_t>(plan.micro_batches.size()) != s.dp) {
    return Status::invalid_argument("micro_batches: " + str(static_cast<std::int64_t>(plan.micro_batches.size())) +
                                    " replicas listed, dp is " + str(s.dp));
  }
  std::int64_t total = 0;
  for (std::int64_t r = 0; r < s.dp; ++r) {
    const std::int64_t m = plan.micro_batches[static_cast<std::size_t>(r)];
    OMNI_RETURN_IF_ERROR(validate_schedule(plan.schedule, s.pp, m).with_context("micro_batches[" + str(r) + "]"));
    total += m;
  }
  if (total * plan.micro_batch != global_batch) {
    return Status::invalid_argument("micro_batches: " + str(total) + " micro-batches of " + str(plan.micro_batch) +
                                    " samples make " + str(total * plan.micro_batch) + ", the global batch is " +
                                    str(global_batch));
  }
  return Status::ok();
}

std::vector<std::int64_t> even_layers(std::int64_t layer_count, std::int64_t virtual_stages) {
  // The transformer layers (all but the embedding, 0, and the head, the last) split evenly, the later stages taking
  // one more when it does not divide; the embedding joins the first stage, the head the last.
  std::vector<std::int64_t> l(static_cast<std::size_t>(virtual_stages), 0);
  const std::int64_t body = std::max<std::int64_t>(layer_count - 2, 0);
  for (std::int64_t j = 0; j < virtual_stages; ++j) {
    l[static_cast<std::size_t>(j)] = body / virtual_stages + (j >= virtual_stages - body % virtual_stages ? 1 : 0);
  }
  l.front() += layer_count - body - (layer_count > 1 ? 1 : 0);
  if (layer_count > 1) l.back() += 1;
  // Too few layers for the stages: fall back to counts, at least one each where possible.
  for (std::int64_t j = 0; j < virtual_stages; ++j) {
    if (l[static_cast<std::size_t>(j)] > 0) continue;
    for (auto& donor : l) {
      if (donor > 1) {
        --donor;
        l[static_cast<std::size_t>(j)] = 1;
        break;
      }
    }
  }
  return l;
}

std::vector<std::int64_t> even_micro_batches(std::int64_t total, std::int64_t replicas) {
  std::vector<std::int64_t> m(static_cast<std::size_t>(replicas), total / replicas);
  for (std::int64_t r = 0; r < total % replicas; ++r) ++m[static_cast<std::size_t>(r)];
  return m;
}

Result<std::vector<std::int64_t>> default_layout(const HybridCluster& cluster, const HybridShape& shape,
                                                 const std::vector<std::int64_t>& devices) {
  if (static_cast<std::int64_t>(devices.size()) < shape.devices()) {
    return Status::invalid_argument("the shape " + str(shape.dp) + " x " + str(shape.pp) + " x " + str(shape.tp) +
                                    " needs " + str(shape.devices()) + " devices, " +
                                    str(static_cast<std::int64_t>(devices.size())) + " are available");
  }
  std::vector<std::int64_t> group(devices.begin(), devices.begin() + shape.devices());
  for (std::int64_t g = 0; g < shape.devices(); g += shape.tp) {
    const auto first = cluster.devices[static_cast<std::size_t>(group[static_cast<std::size_t>(g)])].node;
    for (std::int64_t t = 1; t < shape.tp; ++t) {
      if (cluster.devices[static_cast<std::size_t>(group[static_cast<std::size_t>(g + t)])].node != first) {
        return Status::invalid_argument("a TP group of " + str(shape.tp) + " would span nodes at device " +
                                        str(group[static_cast<std::size_t>(g + t)]) +
                                        "; tp must divide the GPUs of each node");
      }
    }
  }
  return group;
}

}  // namespace omnilearn::hybrid
