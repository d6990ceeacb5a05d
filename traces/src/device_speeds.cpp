#include "omnilearn/traces/device_speeds.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <tuple>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;
using detail::for_each_row;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Result<std::vector<DeviceKind>> parse_device_kinds(std::string_view text, std::string_view source) {
  std::vector<DeviceKind> kinds;
  const Status st = for_each_row(text, source, kDeviceKindsHeader, [&](const auto& f, const std::string& where) {
    DeviceKind k;
    k.name = f[0];
    if (k.name.empty()) return bad(where, "device", f[0], "a device kind's name");
    const auto peak = parse_double(f[1]);
    if (!peak || *peak <= 0.0) return bad(where, "peak_fp32_tflops", f[1], "a number > 0");
    const auto mem = parse_double(f[2]);
    if (!mem || *mem <= 0.0) return bad(where, "memory_gb", f[2], "a number > 0");
    k.peak_fp32_tflops = *peak;
    k.memory_gb = *mem;
    k.description = f[3];
    for (const DeviceKind& other : kinds) {
      if (other.name == k.name) return bad(where, "device", f[0], "a kind not listed before");
    }
    kinds.push_back(std::move(k));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return kinds;
}

Result<std::vector<SpeedPoint>> parse_speed_points(std::string_view text, std::string_view source) {
  std::vector<SpeedPoint> points;
  const Status st = for_each_row(text, source, kDeviceSpeedsHeader, [&](const auto& f, const std::string& where) {
    SpeedPoint p;
    p.model = f[0];
    p.dataset = f[1];
    p.device = f[2];
    p.source = f[5];
    if (p.model.empty()) return bad(where, "model", f[0], "a model name");
    if (p.device.empty()) return bad(where, "device", f[2], "a device kind");
    const auto batch = parse_double(f[3]);
    if (!batch || *batch < 1.0 || *batch != std::floor(*batch) || *batch > 1e12) {
      return bad(where, "batch", f[3], "a whole number of samples per step >= 1");
    }
    p.batch = static_cast<std::int64_t>(*batch);
    const auto speed = parse_double(f[4]);
    if (!speed || *speed <= 0.0) return bad(where, "samples_per_s", f[4], "a number > 0");
    p.samples_per_s = *speed;
    points.push_back(std::move(p));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return points;
}

Result<DeviceSpeedTable> DeviceSpeedTable::create(std::vector<DeviceKind> kinds, std::vector<SpeedPoint> points) {
  std::set<std::string> names;
  for (const DeviceKind& k : kinds) {
    if (k.name.empty() || !(k.peak_fp32_tflops > 0.0) || !(k.memory_gb > 0.0)) {
      return Status::invalid_argument("device kind '" + k.name +
                                      "': expected a name, peak_fp32_tflops > 0 and "
                                      "memory_gb > 0");
    }
    if (!names.insert(k.name).second) return Status::invalid_argument("device kind '" + k.name + "' listed twice");
  }
  for (const SpeedPoint& p : points) {
    if (names.count(p.device) == 0) {
      return Status::invalid_argument(
          "speed of '" + p.model + "' on device '" + p.device +
          "': not a known device kind (expected one of: " + join({names.begin(), names.end()}) + ")");
    }
    if (p.batch < 1 || !(p.samples_per_s > 0.0)) {
      return Status::invalid_argument("speed of '" + p.model + "' on '" + p.device +
                                      "': expected batch >= 1 and samples_per_s > 0");
    }
  }
  const auto key = [](const SpeedPoint& p) { return std::tie(p.model, p.device, p.batch); };
  std::stable_sort(points.begin(), points.end(),
                   [&](const SpeedPoint& a, const SpeedPoint& b) { return key(a) < key(b); });
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (key(points[i]) == key(points[i - 1])) {
      return Status::invalid_argument("speed of '" + points[i].model + "' on '" + points[i].device + "' at batch " +
                                      std::to_string(points[i].batch) + " is given twice; expected one per batch");
    }
  }
  return DeviceSpeedTable(std::move(kinds), std::move(points));
}

const DeviceKind* DeviceSpeedTable::find_kind(std::string_view name) const {
  for (const DeviceKind& k : kinds_) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<std::string> DeviceSpeedTable::models() const {
  std::set<std::string> out;
  for (const SpeedPoint& p : points_) out.insert(p.model);
  return {out.begin(), out.end()};
}

std::vector<std::string> DeviceSpeedTable::measured_kinds(std::string_view model) const {
  std::set<std::string> out;
  for (const SpeedPoint& p : points_) {
    if (p.model == model) out.insert(p.device);
  }
  return {out.begin(), out.end()};
}

SpeedCurve DeviceSpeedTable::measured_curve(std::string_view model, std::string_view device) const {
  SpeedCurve c;
  for (const SpeedPoint& p : points_) {  // sorted by batch (points_ is)
    if (p.model == model && p.device == device) c.points_.push_back({p.batch, p.samples_per_s});
  }
  c.measured_on_ = std::string(device);
  return c;
}

double SpeedCurve::measured(std::int64_t batch, bool& clamped) const {
  const Point& first = points_.front();
  const Point& last = points_.back();
  if (batch <= first.batch || batch >= last.batch) {
    const Point& p = batch <= first.batch ? first : last;
    clamped = batch != p.batch;
    return p.samples_per_s;
  }
  clamped = false;
  // The first measured batch >= batch (one exists: batch < last.batch), and the one before it.
  const auto it = std::lower_bound(points_.begin() + 1, points_.end(), batch,
                                   [](const Point& p, std::int64_t b) { return p.batch < b; });
  const Point& lo = *(it - 1);
  const Point& hi = *it;
  // Step time is close to affine in the batch (a fixed cost plus a cost per sample): interpolate it, not the speed.
  const auto b = static_cast<double>(batch);
  const double t_lo = static_cast<double>(lo.batch) / lo.samples_per_s;
  const double t_hi = static_cast<double>(hi.batch) / hi.samples_per_s;
  const double w = (b - static_cast<double>(lo.batch)) / static_cast<double>(hi.batch - lo.batch);
  return b / (t_lo + w * (t_hi - t_lo));
}

double SpeedCurve::samples_per_s(std::int64_t batch) const {
  bool clamped = false;
  double v = measured(batch, clamped);
  if (derived_) v *= scale_;
  return v;
}

SpeedEstimate SpeedCurve::estimate(std::int64_t batch) const {
  SpeedEstimate e;
  e.samples_per_s = measured(batch, e.clamped);
  e.measured_on = measured_on_;
  if (derived_) {
    e.samples_per_s *= scale_;
    e.derived = true;
  }
  return e;
}

Result<SpeedEstimate> DeviceSpeedTable::speed(std::string_view model, std::string_view device,
                                              std::int64_t batch) const {
  if (find_kind(device) != nullptr && batch < 1) {
    return Status::invalid_argument("batch " + std::to_string(batch) + ": expected >= 1");
  }
  auto c = curve(model, device);
  if (!c.is_ok()) return c.status();
  return c->estimate(batch);
}

Result<SpeedCurve> DeviceSpeedTable::curve(std::string_view model, std::string_view device) const {
  const DeviceKind* kind = find_kind(device);
  if (kind == nullptr) {
    std::vector<std::string> known;
    for (const DeviceKind& k : kinds_) known.push_back(k.name);
    return Status::not_found("device kind '" + std::string(device) +
                             "' is not in the table (expected one of: " + join(known) + ")");
  }
  const std::vector<std::string> on = measured_kinds(model);
  if (on.empty()) {
    return Status::not_found("model '" + std::string(model) +
                             "' has no measured speed (expected one of: " + join(models()) + ")");
  }
  if (std::find(on.begin(), on.end(), device) != on.end()) return measured_curve(model, device);
  const DeviceKind* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const std::string& name : on) {  // sorted by name: the first of equals wins
    const DeviceKind* k = find_kind(name);
    const double gap = std::abs(k->peak_fp32_tflops - kind->peak_fp32_tflops);
    if (gap < best) {
      best = gap;
      nearest = k;
    }
  }
  SpeedCurve c = measured_curve(model, nearest->name);
  c.scale_ = kind->peak_fp32_tflops / nearest->peak_fp32_tflops;
  c.derived_ = true;
  return c;
}

Result<DeviceSpeedTable> read_device_speed_table(const std::string& kinds_path, const std::string& speeds_path) {
  auto kinds_text = read_text_file(kinds_path);
  if (!kinds_text.is_ok()) return kinds_text.status();
  auto kinds = parse_device_kinds(*kinds_text, kinds_path);
  if (!kinds.is_ok()) return kinds.status();
  auto speeds_text = read_text_file(speeds_path);
  if (!speeds_text.is_ok()) return speeds_text.status();
  auto points = parse_speed_points(*speeds_text, speeds_path);
  if (!points.is_ok()) return points.status();
  auto table = DeviceSpeedTable::create(std::move(kinds).value(), std::move(points).value());
  if (!table.is_ok()) return table.status().with_context(speeds_path);
  return table;
}

}  // namespace omnilearn::traces
