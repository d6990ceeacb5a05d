#include "omnilearn/hybrid/stage_costs.h"

#include <cmath>
#include <map>
#include <tuple>

namespace omnilearn::hybrid {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

class ProfileSource final : public LayerCostSource {
 public:
  ProfileSource(std::shared_ptr<const traces::LayerCostTable> table, std::string model, std::int64_t layers)
      : table_(std::move(table)), model_(std::move(model)), layers_(layers) {}
  std::int64_t layer_count() const override { return layers_; }
  Result<traces::LayerCost> cost(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp,
                                 std::int64_t layer) const override {
    return table_->cost(model_, kind.name, micro_batch, tp, layer);
  }
  Result<traces::LayerSize> size(std::int64_t tp, std::int64_t layer) const override {
    return table_->size(model_, tp, layer);
  }
  Seconds tp_collective_s(const DeviceKind&, std::int64_t, std::int64_t, std::int64_t, Seconds) const override {
    return 0.0;
  }
  std::string describe() const override { return "Sailor profile " + model_; }

 private:
  std::shared_ptr<const traces::LayerCostTable> table_;
  std::string model_;
  std::int64_t layers_;
};

class TransformerSource final : public LayerCostSource {
 public:
  explicit TransformerSource(TransformerShape shape) : shape_(shape) {}
  std::int64_t layer_count() const override { return shape_.layers + 2; }
  Result<traces::LayerCost> cost(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp,
                                 std::int64_t layer) const override {
    auto layers = compute(kind, micro_batch, tp);
    if (!layers.is_ok()) return layers.status();
    return (*layers.value())[static_cast<std::size_t>(layer)].cost;
  }
  Result<traces::LayerSize> size(std::int64_t tp, std::int64_t layer) const override {
    DeviceKind any;
    any.name = "size";
    any.peak_flops = 1.0;
    any.efficiency = 1.0;
    auto layers = compute(any, 1, tp);
    if (!layers.is_ok()) return layers.status();
    return (*layers.value())[static_cast<std::size_t>(layer)].size;
  }
  // Megatron's tensor parallelism: two all-reduces of the layer's output (b x s x h 16-bit values) per transformer
  // layer in the forward pass, two in the backward, on the node's links.
  Seconds tp_collective_s(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp, std::int64_t layer,
                          Seconds latency_s) const override {
    if (tp <= 1 || layer == 0 || layer == shape_.layers + 1) return 0.0;
    const double bytes = 2.0 * static_cast<double>(micro_batch * shape_.seq * shape_.hidden);
    return 2.0 * ring_allreduce_s(tp, bytes, kind.intra_node_bytes_per_s, latency_s);
  }
  std::string describe() const override {
    return "transformer h=" + str(shape_.hidden) + " L=" + str(shape_.layers) + " s=" + str(shape_.seq) +
           " V=" + str(shape_.vocab);
  }

 private:
  Result<const std::vector<traces::TransformerLayer>*> compute(const DeviceKind& kind, std::int64_t micro_batch,
                                                               std::int64_t tp) const {
    const auto key = std::make_tuple(kind.name, micro_batch, tp);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      auto layers = traces::transformer_layer_costs(shape_.hidden, shape_.layers, shape_.seq, shape_.vocab,
                                                    micro_batch, tp, kind.peak_flops, kind.efficiency);
      if (!layers.is_ok()) return layers.status().with_context("kind " + kind.name);
      it = cache_.emplace(key, std::move(layers).value()).first;
    }
    return &it->second;
  }
  TransformerShape shape_;
  mutable std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::vector<traces::TransformerLayer>> cache_;
};

Status finite_nonnegative(double v, const char* field, const std::string& where) {
  if (std::isfinite(v) && v >= 0.0) return Status::ok();
  return Status::invalid_argument(where + ": " + field + " is " + std::to_string(v) +
                                  "; expected a finite value >= 0");
}

}  // namespace

Result<std::unique_ptr<LayerCostSource>> make_profile_source(std::shared_ptr<const traces::LayerCostTable> table,
                                                             const std::string& model) {
  auto layers = table->layer_count(model);
  if (!layers.is_ok()) return layers.status();
  return std::unique_ptr<LayerCostSource>(std::make_unique<ProfileSource>(std::move(table), model, *layers));
}

Result<std::unique_ptr<LayerCostSource>> make_transformer_source(const TransformerShape& shape) {
  auto check = traces::transformer_layer_costs(shape.hidden, shape.layers, shape.seq, shape.vocab, 1, 1, 1.0, 1.0);
  if (!check.is_ok()) return check.status().with_context("model.transformer");
  return std::unique_ptr<LayerCostSource>(std::make_unique<TransformerSource>(shape));
}

Seconds ring_allreduce_s(std::int64_t n, double bytes, double bytes_per_s, Seconds latency_s) {
  if (n <= 1) return 0.0;
  const double k = static_cast<double>(n - 1);
  return 2.0 * k / static_cast<double>(n) * bytes / bytes_per_s + 2.0 * k * latency_s;
}

Result<StageCosts> StageCosts::build(const LayerCostSource& source, const HybridCluster& cluster,
                                     std::int64_t micro_batch, std::int64_t tp) {
  StageCosts c;
  c.layers_ = source.layer_count();
  c.micro_batch_ = micro_batch;
  c.tp_ = tp;
  const auto n = static_cast<std::size_t>(c.layers_);
  for (const DeviceKind& kind : cluster.kinds) {
    std::vector<double> f(n + 1, 0.0), b(n + 1, 0.0), u(n + 1, 0.0);
    for (std::int64_t l = 0; l < c.layers_; ++l) {
      const std::string where = "layer " + str(l) + " on " + kind.name;
      auto cost = source.cost(kind, micro_batch, tp, l);
      if (!cost.is_ok()) return cost.status().with_context(where);
      OMNI_RETURN_IF_ERROR(finite_nonnegative(cost->forward_s, "forward_s", where));
      OMNI_RETURN_IF_ERROR(finite_nonnegative(cost->backward_s, "backward_s", where));
      OMNI_RETURN_IF_ERROR(finite_nonnegative(cost->update_s, "update_s", where));
      const Seconds collective = source.tp_collective_s(kind, micro_batch, tp, l, cluster.network.latency_s);
      const auto i = static_cast<std::size_t>(l);
      f[i + 1] = f[i] + cost->forward_s + collective;
      b[i + 1] = b[i] + cost->backward_s + collective;
      u[i + 1] = u[i] + cost->update_s;
    }
    c.forward_.push_back(std::move(f));
    c.backward_.push_back(std::move(b));
    c.update_.push_back(std::move(u));
  }
  c.params_.assign(n + 1, 0.0);
  c.activations_.assign(n + 1, 0.0);
  c.output_.assign(n, 0.0);
  const double mb = static_cast<double>(micro_batch);
  for (std::int64_t l = 0; l < c.layers_; ++l) {
    const std::string where = "layer " + str(l) + " sizes at tp " + str(tp);
    auto size = source.size(tp, l);
    if (!size.is_ok()) return size.status().with_context(where);
    OMNI_RETURN_IF_ERROR(finite_nonnegative(static_cast<double>(size->params), "params", where));
    OMNI_RETURN_IF_ERROR(finite_nonnegative(size->activation_memory_bytes, "activation_memory_bytes", where));
    OMNI_RETURN_IF_ERROR(finite_nonnegative(size->activation_output_bytes, "activation_output_bytes", where));
    const auto i = static_cast<std::size_t>(l);
    c.params_[i + 1] = c.params_[i] + static_cast<double>(size->params);
    c.activations_[i + 1] = c.activations_[i] + size->activation_memory_bytes * mb;
    c.output_[i] = size->activation_output_bytes * mb;
  }
  return c;
}

double StageCosts::range(const std::vector<double>& prefix, std::int64_t first, std::int64_t count) {
  return prefix[static_cast<std::size_t>(first + count)] - prefix[static_cast<std::size_t>(first)];
}
Seconds StageCosts::forward_s(std::int64_t kind, std::int64_t first, std::int64_t count) const {
  return range(forward_[static_cast<std::size_t>(kind)], first, count);
}
Seconds StageCosts::backward_s(std::int64_t kind, std::int64_t first, std::int64_t count) const {
  return range(backward_[static_cast<std::size_t>(kind)], first, count);
}
Seconds StageCosts::update_s(std::int64_t kind, std::int64_t first, std::int64_t count) const {
  return range(update_[static_cast<std::size_t>(kind)], first, count);
}
double StageCosts::params(std::int64_t first, std::int64_t count) const { return range(params_, first, count); }
double StageCosts::activation_bytes(std::int64_t first, std::int64_t count) const {
  return range(activations_, first, count);
}
double StageCosts::output_bytes(std::int64_t layer) const { return output_[static_cast<std::size_t>(layer)]; }

}  // namespace omnilearn::hybrid
