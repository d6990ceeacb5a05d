// Metric curves: how many samples a model trains before its validation metric reaches a target, at a global batch,
// from the shipped table traces/devices/metric-curves.csv (Pollux's measured statistical efficiency, docs/jobs.md).
// Immutable after creation: thread-safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::traces {

inline constexpr std::string_view kMetricCurvesHeader = "model,app,direction,global_batch,samples,metric";

// The validation metric measured after `samples` samples trained.
struct MetricPoint {
  std::int64_t samples = 0;
  double metric = 0.0;
};

// One measured curve: `model` (the job files' name; `app` is the source's) trained at `global_batch`, its points in
// increasing samples.
struct MetricCurve {
  std::string model;
  std::string app;
  bool higher_is_better = true;
  std::int64_t global_batch = 0;
  std::vector<MetricPoint> points;
};

// Samples to first reach `target` on `curve` (>= for higher-is-better, <= for lower): the first point that reaches
// it, linearly interpolated from the point before (the first point's samples when that one already reaches it).
// An error naming the app, the batch and the best metric measured when no point reaches it.
Result<double> samples_to_target(const MetricCurve& curve, double target);

class MetricCurveTable {
 public:
  // Checks the curves (a model has one app and one direction; each batch once; samples increasing, metrics finite).
  static Result<MetricCurveTable> create(std::vector<MetricCurve> curves);

  // The models that have curves, sorted.
  std::vector<std::string> models() const;
  bool has_model(std::string_view model) const;
  // The curve of `model` whose global batch is nearest `global_batch` in log scale (the smaller on a tie); nullptr
  // when the model has none.
  const MetricCurve* nearest(std::string_view model, std::int64_t global_batch) const;
  // samples_to_target() on nearest(); an error naming the models with curves when `model` has none.
  Result<double> samples_to_target(std::string_view model, std::int64_t global_batch, double target) const;

 private:
  explicit MetricCurveTable(std::vector<MetricCurve> curves) : curves_(std::move(curves)) {}
  std::vector<MetricCurve> curves_;  // sorted by (model, global_batch)
};

// The table's rows (header kMetricCurvesHeader; '#' comments) grouped into curves; errors name "source:line".
Result<std::vector<MetricCurve>> parse_metric_curves(std::string_view text, std::string_view source);
// Reads, parses and creates the table at `path`.
Result<MetricCurveTable> read_metric_curve_table(const std::string& path);

}  // namespace omnilearn::traces
