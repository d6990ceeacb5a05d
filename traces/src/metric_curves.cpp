#include "omnilearn/traces/metric_curves.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;

std::optional<std::int64_t> parse_count(const std::string& field, double least) {
  const auto v = parse_double(field);
  if (!v || *v < least || *v != std::floor(*v) || *v > 1e15) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

bool reaches(const MetricCurve& c, double metric, double target) {
  return c.higher_is_better ? metric >= target : metric <= target;
}

std::string curve_name(const MetricCurve& c) {
  return "model '" + c.model + "' (" + c.app + ") at global batch " + std::to_string(c.global_batch);
}

}  // namespace

Result<double> samples_to_target(const MetricCurve& curve, double target) {
  for (std::size_t i = 0; i < curve.points.size(); ++i) {
    const MetricPoint& p = curve.points[i];
    if (!reaches(curve, p.metric, target)) continue;
    if (i == 0) return static_cast<double>(p.samples);
    const MetricPoint& q = curve.points[i - 1];  // does not reach the target: the metric moved towards it
    const double f = (target - q.metric) / (p.metric - q.metric);
    return static_cast<double>(q.samples) + f * static_cast<double>(p.samples - q.samples);
  }
  if (curve.points.empty()) return Status::invalid_argument(curve_name(curve) + ": no measured points");
  double best = curve.points.front().metric;
  for (const MetricPoint& p : curve.points)
    best = curve.higher_is_better ? std::max(best, p.metric) : std::min(best, p.metric);
  return Status::invalid_argument(curve_name(curve) + " never reaches the target " + shortest_number(target) + " (" +
                                  (curve.higher_is_better ? "higher" : "lower") + " is better); the best measured is " +
                                  shortest_number(best));
}

Result<MetricCurveTable> MetricCurveTable::create(std::vector<MetricCurve> curves) {
  std::sort(curves.begin(), curves.end(), [](const MetricCurve& a, const MetricCurve& b) {
    return std::tie(a.model, a.global_batch) < std::tie(b.model, b.global_batch);
  });
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const MetricCurve& c = curves[i];
    if (c.model.empty() || c.app.empty() || c.global_batch < 1 || c.points.empty()) {
      return Status::invalid_argument(curve_name(c) + ": expected a model, an app, a global batch >= 1 and points");
    }
    for (std::size_t k = 0; k < c.points.size(); ++k) {
      if (!std::isfinite(c.points[k].metric) || c.points[k].samples < 1 ||
          (k > 0 && c.points[k].samples <= c.points[k - 1].samples)) {
        return Status::invalid_argument(curve_name(c) + ": expected samples >= 1, increasing, and finite metrics");
      }
    }
    if (i > 0 && curves[i - 1].model == c.model) {
      const MetricCurve& prev = curves[i - 1];
      if (prev.global_batch == c.global_batch) return Status::invalid_argument(curve_name(c) + " is given twice");
      if (prev.app != c.app || prev.higher_is_better != c.higher_is_better) {
        return Status::invalid_argument(curve_name(c) + ": app or direction differs from the model's other curves");
      }
    }
  }
  return MetricCurveTable(std::move(curves));
}

std::vector<std::string> MetricCurveTable::models() const {
  std::vector<std::string> out;
  for (const MetricCurve& c : curves_) {
    if (out.empty() || out.back() != c.model) out.push_back(c.model);
  }
  return out;
}

bool MetricCurveTable::has_model(std::string_view model) const {
  return std::any_of(curves_.begin(), curves_.end(), [&](const MetricCurve& c) { return c.model == model; });
}

const MetricCurve* MetricCurveTable::nearest(std::string_view model, std::int64_t global_batch) const {
  const double b = static_cast<double>(std::max<std::int64_t>(global_batch, 1));
  double best = std::numeric_limits<double>::infinity();
  const MetricCurve* out = nullptr;
  for (const MetricCurve& c : curves_) {  // increasing batch: strict < keeps the smaller on a tie
    if (c.model != model) continue;
    const double d = std::abs(std::log(b / static_cast<double>(c.global_batch)));
    if (d < best) {
      best = d;
      out = &c;
    }
  }
  return out;
}

Result<double> MetricCurveTable::samples_to_target(std::string_view model, std::int64_t global_batch,
                                                   double target) const {
  const MetricCurve* c = nearest(model, global_batch);
  if (c == nullptr) {
    std::string names;
    for (const std::string& m : models()) names += (names.empty() ? "" : ", ") + m;
    return Status::invalid_argument("model '" + std::string(model) +
                                    "' has no measured metric curve, so a target alone cannot say when it ends; "
                                    "models with curves: " +
                                    names + " (or give epochs)");
  }
  return traces::samples_to_target(*c, target);
}

Result<std::vector<MetricCurve>> parse_metric_curves(std::string_view text, std::string_view source) {
  std::vector<MetricCurve> curves;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> index;
  const Status st =
      detail::for_each_row(text, source, kMetricCurvesHeader, [&](const auto& f, const std::string& where) {
        if (f[0].empty()) return bad(where, "model", f[0], "a model name");
        if (f[1].empty()) return bad(where, "app", f[1], "an application name");
        if (f[2] != "higher" && f[2] != "lower") return bad(where, "direction", f[2], "higher or lower");
        const auto batch = parse_count(f[3], 1.0);
        if (!batch) return bad(where, "global_batch", f[3], "a whole number of samples per step >= 1");
        const auto samples = parse_count(f[4], 1.0);
        if (!samples) return bad(where, "samples", f[4], "a whole number of samples >= 1");
        const auto metric = parse_double(f[5]);
        if (!metric || !std::isfinite(*metric)) return bad(where, "metric", f[5], "a finite number");
        const auto [it, added] = index.try_emplace({f[0], *batch}, curves.size());
        if (added) curves.push_back(MetricCurve{f[0], f[1], f[2] == "higher", *batch, {}});
        MetricCurve& c = curves[it->second];
        if (c.app != f[1] || c.higher_is_better != (f[2] == "higher")) {
          return Status::parse_error(where + ": app or direction differs from the curve's earlier rows");
        }
        if (!c.points.empty() && *samples <= c.points.back().samples) {
          return bad(where, "samples", f[4],
                     "more than the curve's previous row (" + std::to_string(c.points.back().samples) + ")");
        }
        c.points.push_back({*samples, *metric});
        return Status::ok();
      });
  if (!st.is_ok()) return st;
  return curves;
}

Result<MetricCurveTable> read_metric_curve_table(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  auto curves = parse_metric_curves(*text, path);
  if (!curves.is_ok()) return curves.status();
  auto table = MetricCurveTable::create(std::move(curves).value());
  if (!table.is_ok()) return table.status().with_context(path);
  return table;
}

}  // namespace omnilearn::traces
