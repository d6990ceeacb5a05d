#include "omnilearn/traces/layer_costs.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;
using detail::for_each_row;
using detail::non_negative;
using detail::whole;

template <class T>
std::string join(const T& items) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += ", ";
    if constexpr (std::is_same_v<typename T::value_type, std::string>) {
      out += i;
    } else {
      out += std::to_string(i);
    }
  }
  return out;
}

// The layers 0..n-1 of `by_layer` as a vector, or an error naming `what` when one is missing or n differs from the
// model's count in `layers` (set by the first group seen).
template <class T>
Result<std::vector<T>> dense(const std::map<std::int64_t, T>& by_layer, const std::string& model,
                             const std::string& what, std::map<std::string, std::int64_t>& layers) {
  const std::int64_t n = static_cast<std::int64_t>(by_layer.size());
  if (by_layer.rbegin()->first != n - 1) {
    return Status::invalid_argument(what + ": layers must be 0.." + std::to_string(n - 1) + " once each; got " +
                                    std::to_string(n) + " layers up to " + std::to_string(by_layer.rbegin()->first));
  }
  const auto [it, first] = layers.emplace(model, n);
  if (!first && it->second != n) {
    return Status::invalid_argument(what + ": " + std::to_string(n) + " layers; expected " +
                                    std::to_string(it->second) + " as in model '" + model + "''s other rows");
  }
  std::vector<T> out;
  out.reserve(by_layer.size());
  for (const auto& [layer, v] : by_layer) out.push_back(v);
  return out;
}

}  // namespace

Result<std::vector<LayerCostRow>> parse_layer_costs(std::string_view text, std::string_view source) {
  std::vector<LayerCostRow> rows;
  const Status st = for_each_row(text, source, kLayerCostsHeader, [&](const auto& f, const std::string& where) {
    LayerCostRow r;
    r.model = f[0];
    r.device = f[1];
    if (r.model.empty()) return bad(where, "model", f[0], "a model name");
    if (r.device.empty()) return bad(where, "device", f[1], "a device kind");
    auto mb = whole(where, "micro_batch", f[2], 1);
    if (!mb.is_ok()) return mb.status();
    auto tp = whole(where, "tp", f[3], 1);
    if (!tp.is_ok()) return tp.status();
    auto layer = whole(where, "layer", f[4], 0);
    if (!layer.is_ok()) return layer.status();
    auto fwd = non_negative(where, "forward_s", f[5]);
    if (!fwd.is_ok()) return fwd.status();
    auto bwd = non_negative(where, "backward_s", f[6]);
    if (!bwd.is_ok()) return bwd.status();
    auto upd = non_negative(where, "update_s", f[7]);
    if (!upd.is_ok()) return upd.status();
    r.micro_batch = *mb;
    r.tp = *tp;
    r.layer = *layer;
    r.cost = LayerCost{*fwd, *bwd, *upd, false};
    rows.push_back(std::move(r));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<std::vector<LayerSizeRow>> parse_layer_sizes(std::string_view text, std::string_view source) {
  std::vector<LayerSizeRow> rows;
  const Status st = for_each_row(text, source, kLayerSizesHeader, [&](const auto& f, const std::string& where) {
    LayerSizeRow r;
    r.model = f[0];
    if (r.model.empty()) return bad(where, "model", f[0], "a model name");
    auto tp = whole(where, "tp", f[1], 1);
    if (!tp.is_ok()) return tp.status();
    auto layer = whole(where, "layer", f[2], 0);
    if (!layer.is_ok()) return layer.status();
    auto params = whole(where, "params", f[3], 0);
    if (!params.is_ok()) return params.status();
    constexpr std::string_view kBytes[] = {"param_bytes", "activation_input_bytes", "activation_output_bytes",
                                           "activation_memory_bytes"};
    double bytes[4] = {};
    for (std::size_t i = 0; i < 4; ++i) {
      auto b = non_negative(where, kBytes[i], f[4 + i]);
      if (!b.is_ok()) return b.status();
      bytes[i] = *b;
    }
    r.tp = *tp;
    r.layer = *layer;
    r.size = LayerSize{*params, bytes[0], bytes[1], bytes[2], bytes[3]};
    rows.push_back(std::move(r));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<LayerCostTable> LayerCostTable::create(std::vector<LayerCostRow> costs, std::vector<LayerSizeRow> sizes) {
  std::map<ProfileKey, std::map<std::int64_t, std::map<std::int64_t, LayerCost>>> by_key;
  for (const LayerCostRow& r : costs) {
    if (r.model.empty() || r.device.empty() || r.micro_batch < 1 || r.tp < 1 || r.layer < 0) {
      return Status::invalid_argument("layer cost of '" + r.model + "' on '" + r.device +
                                      "': expected a model, a device, micro_batch >= 1, tp >= 1 and layer >= 0");
    }
    if (!by_key[{r.model, r.device, r.tp}][r.micro_batch].emplace(r.layer, r.cost).second) {
      return Status::invalid_argument("layer " + std::to_string(r.layer) + " of '" + r.model + "' on '" + r.device +
                                      "' at micro-batch " + std::to_string(r.micro_batch) + " and tp " +
                                      std::to_string(r.tp) + " is given twice; expected one row each");
    }
  }
  std::map<std::pair<std::string, std::int64_t>, std::map<std::int64_t, LayerSize>> by_tp;
  for (const LayerSizeRow& r : sizes) {
    if (!by_tp[{r.model, r.tp}].emplace(r.layer, r.size).second) {
      return Status::invalid_argument("size of layer " + std::to_string(r.layer) + " of '" + r.model + "' at tp " +
                                      std::to_string(r.tp) + " is given twice; expected one row each");
    }
  }
  LayerCostTable t;
  for (const auto& [key, by_mb] : by_key) {
    for (const auto& [mb, by_layer] : by_mb) {
      const auto& [model, device, tp] = key;
      auto layers = dense(
          by_layer, model,
          "'" + model + "' on '" + device + "' at micro-batch " + std::to_string(mb) + " and tp " + std::to_string(tp),
          t.layers_);
      if (!layers.is_ok()) return layers.status();
      t.costs_[key][mb] = std::move(layers).value();
    }
  }
  for (const auto& [key, by_layer] : by_tp) {
    auto layers =
        dense(by_layer, key.first, "sizes of '" + key.first + "' at tp " + std::to_string(key.second), t.layers_);
    if (!layers.is_ok()) return layers.status();
    t.sizes_[key] = std::move(layers).value();
  }
  return t;
}

std::vector<std::string> LayerCostTable::models() const {
  std::vector<std::string> out;
  for (const auto& [model, n] : layers_) out.push_back(model);
  return out;
}

std::vector<std::string> LayerCostTable::kinds(const std::string& model) const {
  std::set<std::string> out;
  for (const auto& [key, by_mb] : costs_) {
    if (std::get<0>(key) == model) out.insert(std::get<1>(key));
  }
  return {out.begin(), out.end()};
}

std::vector<std::int64_t> LayerCostTable::tp_degrees(const std::string& model, const std::string& device) const {
  std::vector<std::int64_t> out;
  for (const auto& [key, by_mb] : costs_) {
    if (std::get<0>(key) == model && std::get<1>(key) == device) out.push_back(std::get<2>(key));
  }
  return out;  // the map orders keys by model, device, then tp
}

std::vector<std::int64_t> LayerCostTable::micro_batches(const std::string& model, const std::string& device,
                                                        std::int64_t tp) const {
  std::vector<std::int64_t> out;
  const auto it = costs_.find({model, device, tp});
  if (it == costs_.end()) return out;
  for (const auto& [mb, layers] : it->second) out.push_back(mb);
  return out;
}

Result<std::int64_t> LayerCostTable::layer_count(const std::string& model) const {
  const auto it = layers_.find(model);
  if (it == layers_.end()) {
    return Status::not_found("model '" + model + "' is in neither layer table (known models: " + join(models()) + ")");
  }
  return it->second;
}

Result<LayerCost> LayerCostTable::cost(const std::string& model, const std::string& device, std::int64_t micro_batch,
                                       std::int64_t tp, std::int64_t layer) const {
  auto n = layer_count(model);
  if (!n.is_ok()) return n.status();
  const std::vector<std::string> on = kinds(model);
  if (on.empty()) {
    std::set<std::string> profiled;
    for (const auto& [key, by_mb] : costs_) profiled.insert(std::get<0>(key));
    return Status::not_found("model '" + model +
                             "' has layer sizes but no measured profile (profiled models: " + join(profiled) + ")");
  }
  if (std::find(on.begin(), on.end(), device) == on.end()) {
    return Status::not_found("model '" + model + "' has no profile on device kind '" + device +
                             "' (measured kinds: " + join(on) + ")");
  }
  const auto it = costs_.find({model, device, tp});
  if (it == costs_.end()) {
    return Status::not_found("model '" + model + "' on '" + device + "' has no profile at tp " + std::to_string(tp) +
                             " (measured tp degrees: " + join(tp_degrees(model, device)) + ")");
  }
  if (layer < 0 || layer >= *n) {
    return Status::invalid_argument("layer " + std::to_string(layer) + " of model '" + model + "': expected 0.." +
                                    std::to_string(*n - 1));
  }
  const auto& by_mb = it->second;
  const auto exact = by_mb.find(micro_batch);
  if (exact != by_mb.end()) return exact->second[static_cast<std::size_t>(layer)];
  const auto hi = by_mb.upper_bound(micro_batch);
  if (micro_batch < 1 || hi == by_mb.begin() || hi == by_mb.end()) {
    return Status::invalid_argument(
        "micro-batch " + std::to_string(micro_batch) + " of model '" + model + "' on '" + device + "' at tp " +
        std::to_string(tp) + " lies outside the measured micro-batches (" + join(micro_batches(model, device, tp)) +
        "); expected one between the smallest and the largest (no extrapolation)");
  }
  const auto lo = std::prev(hi);
  const LayerCost& a = lo->second[static_cast<std::size_t>(layer)];
  const LayerCost& b = hi->second[static_cast<std::size_t>(layer)];
  const double b0 = static_cast<double>(lo->first), b1 = static_cast<double>(hi->first);
  const double x = static_cast<double>(micro_batch), f = (x - b0) / (b1 - b0);
  const auto per_sample = [&](double t0, double t1) { return x * (t0 / b0 + f * (t1 / b1 - t0 / b0)); };
  return LayerCost{per_sample(a.forward_s, b.forward_s), per_sample(a.backward_s, b.backward_s),
                   a.update_s + f * (b.update_s - a.update_s), true};
}

Result<LayerSize> LayerCostTable::size(const std::string& model, std::int64_t tp, std::int64_t layer) const {
  auto n = layer_count(model);
  if (!n.is_ok()) return n.status();
  const auto it = sizes_.find({model, tp});
  if (it == sizes_.end()) {
    std::vector<std::int64_t> measured;
    for (const auto& [key, layers] : sizes_) {
      if (key.first == model) measured.push_back(key.second);
    }
    return Status::not_found("model '" + model + "' has no layer sizes at tp " + std::to_string(tp) +
                             " (measured tp degrees: " + join(measured) + ")");
  }
  if (layer < 0 || layer >= *n) {
    return Status::invalid_argument("layer " + std::to_string(layer) + " of model '" + model + "': expected 0.." +
                                    std::to_string(*n - 1));
  }
  return it->second[static_cast<std::size_t>(layer)];
}

Result<LayerCostTable> read_layer_cost_table(const std::string& costs_path, const std::string& sizes_path) {
  auto costs_text = read_text_file(costs_path);
  if (!costs_text.is_ok()) return costs_text.status();
  auto costs = parse_layer_costs(*costs_text, costs_path);
  if (!costs.is_ok()) return costs.status();
  auto sizes_text = read_text_file(sizes_path);
  if (!sizes_text.is_ok()) return sizes_text.status();
  auto sizes = parse_layer_sizes(*sizes_text, sizes_path);
  if (!sizes.is_ok()) return sizes.status();
  auto table = LayerCostTable::create(std::move(costs).value(), std::move(sizes).value());
  if (!table.is_ok()) return table.status().with_context(costs_path + ", " + sizes_path);
  return table;
}

namespace {

// The bounds transformer_layer_costs() accepts (whole numbers stay exact in 64 bits: V·h <= 1e15).
constexpr std::int64_t kMaxHidden = 1'000'000;
constexpr std::int64_t kMaxCount = 1'000'000'000;
// Bytes of one 16-bit value (weights and activations in mixed precision).
constexpr double kValueBytes = 2.0;

Status check_range(std::string_view name, std::int64_t v, std::int64_t most) {
  if (v < 1 || v > most) {
    return Status::invalid_argument("transformer " + std::string(name) + " " + std::to_string(v) +
                                    ": expected a whole number from 1 to " + std::to_string(most));
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<TransformerLayer>> transformer_layer_costs(std::int64_t hidden, std::int64_t layers,
                                                              std::int64_t seq, std::int64_t vocab,
                                                              std::int64_t micro_batch, std::int64_t tp,
                                                              double peak_flops, double efficiency) {
  OMNI_RETURN_IF_ERROR(check_range("hidden", hidden, kMaxHidden));
  OMNI_RETURN_IF_ERROR(check_range("layers", layers, kMaxHidden));
  OMNI_RETURN_IF_ERROR(check_range("seq", seq, kMaxCount));
  OMNI_RETURN_IF_ERROR(check_range("vocab", vocab, kMaxCount));
  OMNI_RETURN_IF_ERROR(check_range("micro_batch", micro_batch, kMaxCount));
  OMNI_RETURN_IF_ERROR(check_range("tp", tp, hidden));
  if (hidden % tp != 0) {
    return Status::invalid_argument("transformer tp " + std::to_string(tp) + ": expected a divisor of hidden " +
                                    std::to_string(hidden));
  }
  if (!(peak_flops > 0.0) || !std::isfinite(peak_flops)) {
    return Status::invalid_argument("transformer peak_flops " + std::to_string(peak_flops) + ": expected a number > 0");
  }
  if (!(efficiency > 0.0 && efficiency <= 1.0)) {
    return Status::invalid_argument("transformer efficiency " + std::to_string(efficiency) +
                                    ": expected a number in (0, 1]");
  }
  const double h = static_cast<double>(hidden), s = static_cast<double>(seq), v = static_cast<double>(vocab);
  const double b = static_cast<double>(micro_batch), t = static_cast<double>(tp);
  const std::int64_t vocab_shard = (vocab + tp - 1) / tp;  // Megatron pads the vocabulary to a multiple of tp
  const double rate = peak_flops * efficiency;
  const auto layer = [&](double forward_flops, std::int64_t params, double in, double out, double kept) {
    TransformerLayer l;
    l.forward_flops = forward_flops;
    l.cost = LayerCost{forward_flops / rate, 2.0 * forward_flops / rate, 0.0, false};
    l.size = LayerSize{params, kValueBytes * static_cast<double>(params), in, out, kept};
    return l;
  };
  std::vector<TransformerLayer> out;
  out.reserve(static_cast<std::size_t>(layers) + 2);
  // Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21, the
  // FLOP count of their appendix: F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) per iteration counts forward,
  // backward (twice forward) and the forward recomputed before backward (4 passes), and the logits layer's forward
  // 2·B·s·h·V (3 passes, not recomputed). One pass of one transformer layer is thus 24·B·s·h² + 4·B·s²·h.
  const double activation = kValueBytes * s * h;
  out.push_back(layer(0.0, vocab_shard * hidden + seq * hidden, 8.0 * s, activation, activation));
  const double per_layer = (24.0 * b * s * h * h + 4.0 * b * s * s * h) / t;
  const std::int64_t per_layer_params = 12 * hidden * hidden / tp + 13 * hidden;
  // Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", MLSys 2023: with tensor
  // parallelism and selective recomputation a layer keeps s·b·h·(10 + 24/t) bytes.
  const double kept = s * h * (10.0 + 24.0 / t);
  for (std::int64_t i = 0; i < layers; ++i)
    out.push_back(layer(per_layer, per_layer_params, activation, activation, kept));
  const double logits = kValueBytes * s * static_cast<double>(vocab_shard);
  out.push_back(layer(2.0 * b * s * h * v / t, vocab_shard * hidden + 2 * hidden, activation, logits, logits));
  return out;
}

}  // namespace omnilearn::traces
