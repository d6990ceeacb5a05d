// Device kinds and measured training speeds: how many samples per second one worker of a given model trains on one
// device of a kind, from shipped tables (traces/devices/device-kinds.csv, device-speeds.csv; docs/jobs.md). Immutable
// after creation: thread-safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::traces {

struct DeviceKind {
  std::string name;               // "v100", "t4", ...
  double peak_fp32_tflops = 0.0;  // > 0: the data sheet's peak single-precision rate of one device
  double memory_gb = 0.0;         // > 0
  std::string description;
};

// One measured point: `model` training at `batch` samples per step on one `device` reaches `samples_per_s`.
struct SpeedPoint {
  std::string model;
  std::string dataset;
  std::string device;
  std::int64_t batch = 0;
  double samples_per_s = 0.0;
  std::string source;  // where it was measured ("gavel", "pollux", ...)
};

// A lookup's answer, saying how it was obtained.
struct SpeedEstimate {
  double samples_per_s = 0.0;
  std::string measured_on;  // the kind whose measurement was used (== the asked kind unless derived)
  bool derived = false;     // true: scaled from `measured_on` by the ratio of peak FP32 rates
  bool clamped = false;     // true: the batch lies outside the measured batches; the nearest one's speed is used
};

// One model's speeds on one device kind, resolved once from a table (DeviceSpeedTable::curve) so that a simulator
// stepping thousands of workers does not search the table at every step: estimate(b) answers exactly what
// speed(model, device, b) answers, for every batch b >= 1. A value: thread-safe to share.
class SpeedCurve {
 public:
  // speed(model, device, batch) of the table it was resolved from; requires batch >= 1.
  SpeedEstimate estimate(std::int64_t batch) const;
  // estimate(batch).samples_per_s, without copying the kind's name.
  double samples_per_s(std::int64_t batch) const;

 private:
  friend class DeviceSpeedTable;
  struct Point {
    std::int64_t batch;
    double samples_per_s;
  };
  // The measured samples/s at `batch` and whether it was clamped (the lookup of DeviceSpeedTable::speed, unscaled).
  double measured(std::int64_t batch, bool& clamped) const;
  std::vector<Point> points_;  // the measured kind's points, sorted by batch, at least one
  std::string measured_on_;
  bool derived_ = false;
  double scale_ = 1.0;  // derived: the ratio of peak FP32 rates (asked kind / measured kind)
};

class DeviceSpeedTable {
 public:
  // Checks that kinds are unique and valid, that every point names a known kind, has batch >= 1 and a speed > 0,
  // and that no (model, device, batch) repeats.
  static Result<DeviceSpeedTable> create(std::vector<DeviceKind> kinds, std::vector<SpeedPoint> points);

  const std::vector<DeviceKind>& kinds() const { return kinds_; }
  const std::vector<SpeedPoint>& points() const { return points_; }  // sorted by model, device, batch
  const DeviceKind* find_kind(std::string_view name) const;
  std::vector<std::string> models() const;  // sorted, unique
  // The kinds on which `model` was measured, sorted by name.
  std::vector<std::string> measured_kinds(std::string_view model) const;

  // Samples per second of one worker of `model` at `batch` samples per step on one device of `device`.
  // Measured on that kind: step time (batch / speed) interpolated linearly between the two measured batches around
  // `batch`; outside them, the nearest measured batch's speed (clamped). Not measured on that kind: the same lookup
  // on the model's measured kind nearest in peak FP32 rate (ties: the first by name), times the ratio of the peaks
  // (derived). An error names an unknown model or kind and lists the known ones.
  Result<SpeedEstimate> speed(std::string_view model, std::string_view device, std::int64_t batch) const;
  // The curve that answers speed(model, device, b) for every b >= 1; the same errors as speed() for an unknown
  // model or kind.
  Result<SpeedCurve> curve(std::string_view model, std::string_view device) const;

 private:
  DeviceSpeedTable(std::vector<DeviceKind> kinds, std::vector<SpeedPoint> points)
      : kinds_(std::move(kinds)), points_(std::move(points)) {}
  SpeedCurve measured_curve(std::string_view model, std::string_view device) const;
  std::vector<DeviceKind> kinds_;
  std::vector<SpeedPoint> points_;
};

inline constexpr std::string_view kDeviceKindsHeader = "device,peak_fp32_tflops,memory_gb,description";
inline constexpr std::string_view kDeviceSpeedsHeader = "model,dataset,device,batch,samples_per_s,source";

// Parse the two tables (comments start with '#'; errors read "source:line: ..."), and read both files into a table.
Result<std::vector<DeviceKind>> parse_device_kinds(std::string_view text, std::string_view source);
Result<std::vector<SpeedPoint>> parse_speed_points(std::string_view text, std::string_view source);
Result<DeviceSpeedTable> read_device_speed_table(const std::string& kinds_path, const std::string& speeds_path);

}  // namespace omnilearn::traces
