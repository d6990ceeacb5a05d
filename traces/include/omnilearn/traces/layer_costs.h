// LayerCostTable: what one layer of a model costs on one GPU of a tensor-parallel group, the first building block of
// pipeline/tensor/data-parallel jobs (docs/hybrid.md): forward, backward and update seconds per (model, device kind,
// micro-batch, tensor-parallel degree, layer), measured by Sailor (traces/devices/sailor-layers.csv), and parameters
// and activation bytes per layer (traces/devices/sailor-models.csv), both derived by scripts/sailor-tables.py; and
// transformer_layer_costs(), the same for a transformer without profiles, from the Megatron FLOP count.
// Immutable after read(): thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// The columns of the two tables, in order.
inline constexpr std::string_view kLayerCostsHeader = "model,device,micro_batch,tp,layer,forward_s,backward_s,update_s";
inline constexpr std::string_view kLayerSizesHeader =
    "model,tp,layer,params,param_bytes,activation_input_bytes,activation_output_bytes,activation_memory_bytes";

// The seconds one layer takes for one micro-batch on one GPU of its tensor-parallel group.
struct LayerCost {
  Seconds forward_s = 0.0;
  Seconds backward_s = 0.0;
  Seconds update_s = 0.0;     // the optimizer step (Sailor writes one value for every layer of a profile)
  bool interpolated = false;  // the micro-batch lies between two measured ones (else it was measured)
};

// One layer's size on one GPU of its tensor-parallel group. Activations are per sample (Sailor profiles them at
// micro-batch 1): a micro-batch of b holds b times them.
struct LayerSize {
  std::int64_t params = 0;
  double param_bytes = 0.0;
  double activation_input_bytes = 0.0;   // what the layer receives (a pipeline stage's receive, if it starts there)
  double activation_output_bytes = 0.0;  // what it hands on (a stage's send, if it ends there)
  double activation_memory_bytes = 0.0;  // what it keeps for its backward pass
};

// One row of sailor-layers.csv, and one of sailor-models.csv.
struct LayerCostRow {
  std::string model;
  std::string device;
  std::int64_t micro_batch = 0;
  std::int64_t tp = 0;
  std::int64_t layer = 0;
  LayerCost cost;
};
struct LayerSizeRow {
  std::string model;
  std::int64_t tp = 0;
  std::int64_t layer = 0;
  LayerSize size;
};

class LayerCostTable {
 public:
  // Checks the rows: each (model, device, micro-batch, tp) and (model, tp) lists layers 0..n-1 once each, with the
  // same n for every row of a model in both tables (a model may have sizes without profiles, or profiles without
  // sizes).
  static Result<LayerCostTable> create(std::vector<LayerCostRow> costs, std::vector<LayerSizeRow> sizes);

  std::vector<std::string> models() const;
  // Device kinds with a profile of `model` (empty for an unknown model); the tp degrees measured on one of them; the
  // micro-batches measured at one of those: each in increasing order.
  std::vector<std::string> kinds(const std::string& model) const;
  std::vector<std::int64_t> tp_degrees(const std::string& model, const std::string& device) const;
  std::vector<std::int64_t> micro_batches(const std::string& model, const std::string& device, std::int64_t tp) const;
  // Layers of `model` (0: the embedding, the last: the output head), or an error naming the known models.
  Result<std::int64_t> layer_count(const std::string& model) const;

  // The cost of `layer` of `model` on `device` at `micro_batch` and tensor-parallel degree `tp`. A measured
  // micro-batch gives its measured seconds. One between two measured micro-batches b0 < b < b1 (at the same device
  // and tp) is interpolated linearly in the per-sample time: forward and backward are b x (t(b0)/b0 + f x
  // (t(b1)/b1 - t(b0)/b0)), f = (b - b0) / (b1 - b0), the update (which does not grow with the batch) linearly in b;
  // flagged `interpolated`. Anything else is refused: an unknown model, device, tp or layer, or a micro-batch
  // outside the measured ones, with an error naming what is measured.
  Result<LayerCost> cost(const std::string& model, const std::string& device, std::int64_t micro_batch, std::int64_t tp,
                         std::int64_t layer) const;
  // The size of `layer` of `model` at tensor-parallel degree `tp`; an error naming the measured degrees otherwise.
  Result<LayerSize> size(const std::string& model, std::int64_t tp, std::int64_t layer) const;

 private:
  using ProfileKey = std::tuple<std::string, std::string, std::int64_t>;  // model, device, tp
  // (model, device, tp) -> micro-batch -> the layers' costs, by layer; (model, tp) -> the layers' sizes.
  std::map<ProfileKey, std::map<std::int64_t, std::vector<LayerCost>>> costs_;
  std::map<std::pair<std::string, std::int64_t>, std::vector<LayerSize>> sizes_;
  std::map<std::string, std::int64_t> layers_;  // model -> layer count
};

// Parse the two tables (comments start with '#'; errors read "source:line: field 'value' is not valid; ..."), and
// read both files into a table (errors of create() name the costs file).
Result<std::vector<LayerCostRow>> parse_layer_costs(std::string_view text, std::string_view source);
Result<std::vector<LayerSizeRow>> parse_layer_sizes(std::string_view text, std::string_view source);
Result<LayerCostTable> read_layer_cost_table(const std::string& costs_path, const std::string& sizes_path);

// One layer of transformer_layer_costs(): its cost for the micro-batch and its size (activations per sample).
struct TransformerLayer {
  LayerCost cost;
  LayerSize size;
  double forward_flops = 0.0;  // on one GPU of the tensor-parallel group, for the micro-batch
};

// A decoder-only transformer of `layers` layers of width `hidden`, sequence `seq` and vocabulary `vocab` on one GPU
// of a tensor-parallel group of `tp` that reaches `efficiency` (0 < e <= 1) of `peak_flops` (FLOP/s): layers + 2
// entries numbered as Sailor's, 0 the embedding, 1..layers the transformer layers, layers + 1 the output head.
// FLOPs per micro-batch b (Megatron's count, divided by tp): a transformer layer's forward 24·b·s·h² + 4·b·s²·h,
// the head's 2·b·s·h·V, the embedding's 0 (a lookup); each backward twice its forward; seconds = FLOPs / (peak x
// efficiency); no update time (0). Sizes with 16-bit values (2 bytes each): parameters 12·h²/tp + 13·h per
// transformer layer, V·h/tp + s·h for the embedding (vocabulary-parallel, learned positions), V·h/tp + 2·h for the
// head (an untied projection and the final norm); activations per sample: 2·s·h bytes in and out (the embedding's
// in: s token ids of 8 bytes; the head's out: its 2·s·V/tp bytes of logits, V/tp rounded up), and kept for the backward
// pass s·h·(10 + 24/tp) bytes by a transformer layer (Korthikanti et al., MLSys 2023, tensor parallelism with selective
// recomputation), its output by the embedding and the head. Errors name the argument out of range (sizes >= 1, hidden a
// multiple of tp).
Result<std::vector<TransformerLayer>> transformer_layer_costs(std::int64_t hidden, std::int64_t layers,
                                                              std::int64_t seq, std::int64_t vocab,
                                                              std::int64_t micro_batch, std::int64_t tp,
                                                              double peak_flops, double efficiency);

}  // namespace omnilearn::traces
