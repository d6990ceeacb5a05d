// Where a hybrid job's per-layer costs come from (LayerCostSource: Sailor's measured profiles, or the transformer
// shorthand with the Megatron FLOP count), and StageCosts: those costs for one micro-batch size and TP degree on
// every kind of a cluster, summed over any run of layers in O(1). A source is read-only after creation, except the
// shorthand's cache (not thread-safe); StageCosts is immutable after build(): thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/hybrid/hybrid_job.h"
#include "omnilearn/traces/layer_costs.h"

namespace omnilearn::hybrid {

class LayerCostSource {
 public:
  virtual ~LayerCostSource() = default;
  virtual std::int64_t layer_count() const = 0;
  // One layer on one GPU of a TP group of `tp` on `kind`, for a micro-batch of `micro_batch` samples.
  virtual Result<traces::LayerCost> cost(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp,
                                         std::int64_t layer) const = 0;
  virtual Result<traces::LayerSize> size(std::int64_t tp, std::int64_t layer) const = 0;
  // Seconds of the TP group's collectives in one layer's forward (and again in its backward) that cost() leaves
  // out: 0 for measured profiles (measured on real TP groups), Megatron's two all-reduces per transformer layer for
  // the shorthand.
  virtual Seconds tp_collective_s(const DeviceKind& kind, std::int64_t micro_batch, std::int64_t tp,
                                  std::int64_t layer, Seconds latency_s) const = 0;
  // "Sailor profile OPT-350", "transformer h=12288 L=96 s=2048 V=51200": for summaries.
  virtual std::string describe() const = 0;
};

// Sailor's measured profiles of `model` (the table's model name).
Result<std::unique_ptr<LayerCostSource>> make_profile_source(std::shared_ptr<const traces::LayerCostTable> table,
                                                             const std::string& model);

struct TransformerShape {
  std::int64_t hidden = 0;
  std::int64_t layers = 0;  // transformer layers; the source has layers + 2 (embedding, head)
  std::int64_t seq = 0;
  std::int64_t vocab = 0;
};
// The shorthand (traces::transformer_layer_costs) at each kind's peak_flops x efficiency.
Result<std::unique_ptr<LayerCostSource>> make_transformer_source(const TransformerShape& shape);

// A ring all-reduce of `bytes` over `n` members: 2(n-1)/n x bytes / bandwidth + 2(n-1) x latency (0 when n <= 1).
Seconds ring_allreduce_s(std::int64_t n, double bytes, double bytes_per_s, Seconds latency_s);

class StageCosts {
 public:
  // Reads every layer's cost on every kind of `cluster` at (micro_batch, tp). An error names the kind, layer and
  // why (a kind without a profile, a NaN or negative value in the source: "layer 3 on A100-40: forward_s is nan").
  static Result<StageCosts> build(const LayerCostSource& source, const HybridCluster& cluster,
                                  std::int64_t micro_batch, std::int64_t tp);

  std::int64_t layer_count() const { return layers_; }
  std::int64_t micro_batch() const { return micro_batch_; }
  std::int64_t tp() const { return tp_; }
  // Sums over layers [first, first + count) at full speed on `kind`, TP collectives included.
  Seconds forward_s(std::int64_t kind, std::int64_t first, std::int64_t count) const;
  Seconds backward_s(std::int64_t kind, std::int64_t first, std::int64_t count) const;
  Seconds update_s(std::int64_t kind, std::int64_t first, std::int64_t count) const;
  double params(std::int64_t first, std::int64_t count) const;
  // What the layers keep for their backward pass, for one micro-batch.
  double activation_bytes(std::int64_t first, std::int64_t count) const;
  // What layer `layer` hands on (forward) for one micro-batch; the gradient sent back has the same size.
  double output_bytes(std::int64_t layer) const;

 private:
  static double range(const std::vector<double>& prefix, std::int64_t first, std::int64_t count);
  std::int64_t layers_ = 0, micro_batch_ = 1, tp_ = 1;
  std::vector<std::vector<double>> forward_, backward_, update_;  // [kind] prefix sums over layers
  std::vector<double> params_, activations_;                      // prefix sums
  std::vector<double> output_;                                    // per layer, per micro-batch
};

}  // namespace omnilearn::hybrid
