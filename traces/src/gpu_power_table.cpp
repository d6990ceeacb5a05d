#include "omnilearn/traces/gpu_power_table.h"

#include <cmath>
#include <iterator>
#include <optional>
#include <tuple>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;
using detail::for_each_row;
using detail::whole;

// How far energy may differ from time x power, relative to it (the derived table writes their exact product).
constexpr double kEnergyTolerance = 1e-9;

std::string join(const std::vector<std::int64_t>& items) {
  std::string out;
  for (const std::int64_t i : items) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// "12.5" for 12.5, "150" for 150.0: a limit as a reader would write it.
std::string watts(double w) {
  std::string s = std::to_string(w);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// `value` as a finite number > 0, or an error naming the field.
Result<double> positive(const std::string& where, std::string_view field, const std::string& value) {
  const std::optional<double> v = parse_double(value);
  if (!v || !(*v > 0.0)) return bad(where, field, value, "a number > 0");
  return *v;
}

bool energy_matches(const GpuFigure& f) {
  return std::abs(f.energy_per_epoch_j - f.time_per_epoch_s * f.average_power_w) <=
         kEnergyTolerance * f.energy_per_epoch_j;
}

double to_scale(InterpolationScale s, double x) {
  switch (s) {
    case InterpolationScale::kLog:
      return std::log(x);
    case InterpolationScale::kReciprocal:
      return 1.0 / x;
    case InterpolationScale::kLinear:
      break;
  }
  return x;
}

double from_scale(InterpolationScale s, double y) {
  switch (s) {
    case InterpolationScale::kLog:
      return std::exp(y);
    case InterpolationScale::kReciprocal:
      return 1.0 / y;
    case InterpolationScale::kLinear:
      break;
  }
  return y;
}

// y at x between (x0, y0) and (x1, y1), x0 < x < x1, all positive, under `rule`.
double interpolate(const InterpolationRule& rule, double x0, double y0, double x1, double y1, double x) {
  const double a0 = to_scale(rule.axis, x0), a1 = to_scale(rule.axis, x1);
  const double f = (to_scale(rule.axis, x) - a0) / (a1 - a0);
  const double v0 = to_scale(rule.value, y0), v1 = to_scale(rule.value, y1);
  return from_scale(rule.value, v0 + f * (v1 - v0));
}

// The figures at x between two measured (x0, a) and (x1, b), with the two rules for time and power.
GpuFigure between(const InterpolationRule& time, const InterpolationRule& power, double x0, const GpuFigure& a,
                  double x1, const GpuFigure& b, double x) {
  GpuFigure out;
  out.time_per_epoch_s = interpolate(time, x0, a.time_per_epoch_s, x1, b.time_per_epoch_s, x);
  out.average_power_w = interpolate(power, x0, a.average_power_w, x1, b.average_power_w, x);
  out.energy_per_epoch_j = out.time_per_epoch_s * out.average_power_w;
  out.source = GpuFigureSource::kInterpolated;
  return out;
}

std::string what(const std::string& kind, const std::string& workload) {
  return "workload '" + workload + "' on '" + kind + "'";
}

}  // namespace

Result<std::vector<GpuPowerRow>> parse_gpu_power_rows(std::string_view text, std::string_view source) {
  std::vector<GpuPowerRow> rows;
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t>, std::string> seen;  // -> "source:line"
  // The last (batch, limit) of each kind and workload, and its "source:line": their rows must come in increasing
  // batch, then increasing power limit (the shipped table's order), so a limit never steps back within a batch.
  std::map<std::pair<std::string, std::string>, std::pair<std::pair<std::int64_t, std::int64_t>, std::string>> last;
  const Status st = for_each_row(text, source, kGpuPowerHeader, [&](const auto& f, const std::string& where) {
    constexpr std::string_view kNames[] = {"kind", "dataset", "network", "optimizer"};
    for (std::size_t i = 0; i < 4; ++i) {
      if (f[i].empty() || f[i].find('/') != std::string::npos) {
        return bad(where, kNames[i], f[i], "a name without '/'");
      }
    }
    GpuPowerRow r;
    r.kind = f[0];
    r.workload = f[1] + "/" + f[2] + "/" + f[3];
    auto batch = whole(where, "batch", f[4], 1);
    if (!batch.is_ok()) return batch.status();
    auto limit = whole(where, "power_limit_w", f[5], 1);
    if (!limit.is_ok()) return limit.status();
    auto time = positive(where, "time_per_epoch_s", f[6]);
    if (!time.is_ok()) return time.status();
    auto power = positive(where, "average_power_w", f[7]);
    if (!power.is_ok()) return power.status();
    auto energy = positive(where, "energy_per_epoch_j", f[8]);
    if (!energy.is_ok()) return energy.status();
    r.batch = *batch;
    r.power_limit_w = *limit;
    r.figure = GpuFigure{*time, *power, *energy, GpuFigureSource::kMeasured};
    if (!energy_matches(r.figure)) {
      return bad(where, "energy_per_epoch_j", f[8],
                 "time_per_epoch_s x average_power_w (" + std::to_string(*time * *power) + ")");
    }
    const auto [it, first] = seen.emplace(std::tuple{r.kind, r.workload, r.batch, r.power_limit_w}, where);
    if (!first) {
      return bad(where, "power_limit_w", f[5],
                 "one row per kind, workload, batch and power limit (" + it->second + " has this one)");
    }
    const auto [prev, fresh] = last.try_emplace({r.kind, r.workload}, std::pair{r.batch, r.power_limit_w}, where);
    if (!fresh) {
      const auto [batch_before, limit_before] = prev->second.first;
      if (std::pair{r.batch, r.power_limit_w} < prev->second.first) {
        const bool same_batch = batch_before == r.batch;
        return bad(where, same_batch ? "power_limit_w" : "batch", same_batch ? f[5] : f[4],
                   "the rows of " + what(r.kind, r.workload) + " in increasing batch, then increasing power limit (" +
                       prev->second.second + " has batch " + std::to_string(batch_before) + " at " +
                       std::to_string(limit_before) + " W)");
      }
      prev->second = {{r.batch, r.power_limit_w}, where};
    }
    rows.push_back(std::move(r));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<GpuPowerTable> GpuPowerTable::create(std::vector<GpuPowerRow> rows, GpuInterpolation interpolation) {
  GpuPowerTable t;
  t.interpolation_ = interpolation;
  for (GpuPowerRow& r : rows) {
    const GpuFigure& f = r.figure;
    const bool finite =
        std::isfinite(f.time_per_epoch_s) && std::isfinite(f.average_power_w) && std::isfinite(f.energy_per_epoch_j);
    if (r.kind.empty() || r.workload.empty() || r.batch < 1 || r.power_limit_w < 1 || !finite ||
        !(f.time_per_epoch_s > 0.0) || !(f.average_power_w > 0.0) || !energy_matches(f)) {
      return Status::invalid_argument(
          "GPU figures of " + what(r.kind, r.workload) + " at batch " + std::to_string(r.batch) + " and " +
          std::to_string(r.power_limit_w) +
          " W: expected a kind, a workload, batch >= 1, a limit >= 1 W, finite time and power > 0 and energy = time x "
          "power");
    }
    r.figure.source = GpuFigureSource::kMeasured;
    if (!t.rows_[{r.kind, r.workload}][r.batch].emplace(r.power_limit_w, r.figure).second) {
      return Status::invalid_argument(what(r.kind, r.workload) + " at batch " + std::to_string(r.batch) + " and " +
                                      std::to_string(r.power_limit_w) + " W is given twice; expected one row each");
    }
  }
  return t;
}

std::vector<std::string> GpuPowerTable::kinds() const {
  std::vector<std::string> out;
  for (const auto& [key, by_batch] : rows_) {
    if (out.empty() || out.back() != key.first) out.push_back(key.first);  // the map orders keys by kind first
  }
  return out;
}

std::vector<std::string> GpuPowerTable::workloads(const std::string& kind) const {
  std::vector<std::string> out;
  for (const auto& [key, by_batch] : rows_) {
    if (key.first == kind) out.push_back(key.second);
  }
  return out;
}

std::vector<std::int64_t> GpuPowerTable::batches(const std::string& kind, const std::string& workload) const {
  std::vector<std::int64_t> out;
  const auto it = rows_.find({kind, workload});
  if (it == rows_.end()) return out;
  for (const auto& [batch, limits] : it->second) out.push_back(batch);
  return out;
}

std::vector<std::int64_t> GpuPowerTable::power_limits(const std::string& kind, const std::string& workload,
                                                      std::int64_t batch) const {
  std::vector<std::int64_t> out;
  const auto it = rows_.find({kind, workload});
  if (it == rows_.end()) return out;
  const auto b = it->second.find(batch);
  if (b == it->second.end()) return out;
  for (const auto& [limit, figure] : b->second) out.push_back(limit);
  return out;
}

Result<GpuFigure> GpuPowerTable::at_batch(const Key& key, std::int64_t batch, const ByLimit& limits,
                                          double power_limit_w) const {
  const double least = static_cast<double>(limits.begin()->first), most = static_cast<double>(limits.rbegin()->first);
  if (power_limit_w < least || power_limit_w > most) {
    std::vector<std::int64_t> measured;
    for (const auto& [limit, figure] : limits) measured.push_back(limit);
    return Status::invalid_argument("power limit " + watts(power_limit_w) + " W of " + what(key.first, key.second) +
                                    " at batch " + std::to_string(batch) + " lies outside the measured limits (" +
                                    join(measured) +
                                    " W); expected one from the smallest to the largest (no extrapolation)");
  }
  // The first measured limit at or above the wanted one (in range, so the cast cannot overflow).
  const auto hi = limits.lower_bound(static_cast<std::int64_t>(std::ceil(power_limit_w)));
  if (static_cast<double>(hi->first) == power_limit_w) return hi->second;
  const auto lo = std::prev(hi);
  return between(interpolation_.time_in_limit, interpolation_.power_in_limit, static_cast<double>(lo->first),
                 lo->second, static_cast<double>(hi->first), hi->second, power_limit_w);
}

Result<GpuFigure> GpuPowerTable::figure(const std::string& kind, const std::string& workload, std::int64_t batch,
                                        double power_limit_w) const {
  const auto it = rows_.find({kind, workload});
  if (it == rows_.end()) {
    const std::vector<std::string> on = workloads(kind);
    if (on.empty()) {
      return Status::not_found("GPU kind '" + kind + "' is not in the power table (measured kinds: " + join(kinds()) +
                               ")");
    }
    return Status::not_found(what(kind, workload) + " is not measured (workloads on '" + kind + "': " + join(on) + ")");
  }
  if (!(power_limit_w > 0.0) || !std::isfinite(power_limit_w)) {
    return Status::invalid_argument("power limit " + std::to_string(power_limit_w) + " W of " + what(kind, workload) +
                                    ": expected a number > 0");
  }
  const auto& by_batch = it->second;
  const auto exact = by_batch.find(batch);
  if (exact != by_batch.end()) return at_batch(it->first, batch, exact->second, power_limit_w);
  const auto hi = by_batch.upper_bound(batch);
  if (hi == by_batch.begin() || hi == by_batch.end()) {
    return Status::invalid_argument("batch " + std::to_string(batch) + " of " + what(kind, workload) +
                                    " lies outside the measured batches (" + join(batches(kind, workload)) +
                                    "); expected one from the smallest to the largest (no extrapolation)");
  }
  const auto lo = std::prev(hi);
  auto a = at_batch(it->first, lo->first, lo->second, power_limit_w);
  if (!a.is_ok()) return a.status();
  auto b = at_batch(it->first, hi->first, hi->second, power_limit_w);
  if (!b.is_ok()) return b.status();
  return between(interpolation_.time_in_batch, interpolation_.power_in_batch, static_cast<double>(lo->first), *a,
                 static_cast<double>(hi->first), *b, static_cast<double>(batch));
}

Result<GpuPowerTable> read_gpu_power_table(const std::string& path, GpuInterpolation interpolation) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  auto rows = parse_gpu_power_rows(*text, path);
  if (!rows.is_ok()) return rows.status();
  auto table = GpuPowerTable::create(std::move(rows).value(), interpolation);
  if (!table.is_ok()) return table.status().with_context(path);
  return table;
}

}  // namespace omnilearn::traces
