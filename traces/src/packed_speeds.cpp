#include "omnilearn/traces/packed_speeds.h"

#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;

std::optional<std::int64_t> parse_batch(const std::string& field) {
  const auto b = parse_double(field);
  if (!b || *b < 1.0 || *b != std::floor(*b) || *b > 1e12) return std::nullopt;
  return static_cast<std::int64_t>(*b);
}

bool valid_fraction(double f) { return f >= 0.0 && f <= 1.5; }

}  // namespace

Result<std::vector<PackedPair>> parse_packed_pairs(std::string_view text, std::string_view source) {
  std::vector<PackedPair> pairs;
  const Status st =
      detail::for_each_row(text, source, kPackedSpeedsHeader, [&](const auto& f, const std::string& where) {
        PackedPair p;
        p.device = f[0];
        p.model_a = f[1];
        p.model_b = f[3];
        if (p.device.empty()) return bad(where, "device", f[0], "a device kind");
        if (p.model_a.empty()) return bad(where, "model_a", f[1], "a model name");
        if (p.model_b.empty()) return bad(where, "model_b", f[3], "a model name");
        const auto ba = parse_batch(f[2]);
        if (!ba) return bad(where, "batch_a", f[2], "a whole number of samples per step >= 1");
        const auto bb = parse_batch(f[4]);
        if (!bb) return bad(where, "batch_b", f[4], "a whole number of samples per step >= 1");
        const auto fa = parse_double(f[5]);
        if (!fa || !valid_fraction(*fa)) return bad(where, "fraction_a", f[5], "a number in [0, 1.5]");
        const auto fb = parse_double(f[6]);
        if (!fb || !valid_fraction(*fb)) return bad(where, "fraction_b", f[6], "a number in [0, 1.5]");
        p.batch_a = *ba;
        p.batch_b = *bb;
        p.fraction_a = *fa;
        p.fraction_b = *fb;
        pairs.push_back(std::move(p));
        return Status::ok();
      });
  if (!st.is_ok()) return st;
  return pairs;
}

Result<PackedSpeedTable> PackedSpeedTable::create(std::vector<PackedPair> pairs) {
  std::set<std::tuple<std::string, std::string, std::int64_t, std::string, std::int64_t>> seen;
  for (const PackedPair& p : pairs) {
    const std::string what = "packed pair " + p.model_a + "/" + std::to_string(p.batch_a) + " + " + p.model_b + "/" +
                             std::to_string(p.batch_b) + " on '" + p.device + "'";
    if (p.device.empty() || p.model_a.empty() || p.model_b.empty() || p.batch_a < 1 || p.batch_b < 1 ||
        !valid_fraction(p.fraction_a) || !valid_fraction(p.fraction_b)) {
      return Status::invalid_argument(what + ": expected a device, two models, batches >= 1 and fractions in [0, 1.5]");
    }
    // Keyed in a canonical order, so (a, b) and (b, a) are the same pair.
    auto a = std::tie(p.model_a, p.batch_a);
    auto b = std::tie(p.model_b, p.batch_b);
    const bool ordered = a <= b;
    if (!seen.insert({p.device, ordered ? p.model_a : p.model_b, ordered ? p.batch_a : p.batch_b,
                      ordered ? p.model_b : p.model_a, ordered ? p.batch_b : p.batch_a})
             .second) {
      return Status::invalid_argument(what + " is given twice; expected each pair once");
    }
  }
  return PackedSpeedTable(std::move(pairs));
}

std::optional<PackedFractions> PackedSpeedTable::fractions(std::string_view device, std::string_view model_1,
                                                           std::int64_t batch_1, std::string_view model_2,
                                                           std::int64_t batch_2) const {
  const auto distance = [](std::int64_t b, std::int64_t measured) {
    return std::abs(std::log(static_cast<double>(std::max<std::int64_t>(b, 1)) / static_cast<double>(measured)));
  };
  double best = std::numeric_limits<double>::infinity();
  std::optional<PackedFractions> out;
  for (const PackedPair& p : pairs_) {
    if (p.device != device) continue;
    // A pair serves both orders; a pair of one model at one batch with itself matches either way.
    for (const bool swapped : {false, true}) {
      const std::string& ma = swapped ? p.model_b : p.model_a;
      const std::string& mb = swapped ? p.model_a : p.model_b;
      if (ma != model_1 || mb != model_2) continue;
      const std::int64_t ba = swapped ? p.batch_b : p.batch_a;
      const std::int64_t bb = swapped ? p.batch_a : p.batch_b;
      const double d = distance(batch_1, ba) + distance(batch_2, bb);
      if (d < best) {
        best = d;
        out = PackedFractions{swapped ? p.fraction_b : p.fraction_a, swapped ? p.fraction_a : p.fraction_b};
      }
    }
  }
  if (out && (out->first <= 0.0 || out->second <= 0.0)) return std::nullopt;
  return out;
}

Result<PackedSpeedTable> read_packed_speed_table(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  auto pairs = parse_packed_pairs(*text, path);
  if (!pairs.is_ok()) return pairs.status();
  auto table = PackedSpeedTable::create(std::move(pairs).value());
  if (!table.is_ok()) return table.status().with_context(path);
  return table;
}

}  // namespace omnilearn::traces
