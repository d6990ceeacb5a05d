// GpuPowerTable: measured GPU figures per (device kind, workload, batch, power limit): the seconds of one training
// epoch, the GPU's average power and their product, the joules of one epoch, as Zeus measured them on four GPU kinds
// (traces/devices/zeus-power.csv, derived by scripts/zeus-tables.py), interpolated between measured points and
// refused outside them (docs/energy.md, "Measured GPU tables (Zeus)"). Immutable after create(): thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// The columns of zeus-power.csv, in order.
inline constexpr std::string_view kGpuPowerHeader =
    "kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,average_power_w,energy_per_epoch_j";

// Where a figure comes from.
enum class GpuFigureSource {
  kMeasured,      // a row of the table
  kInterpolated,  // between measured rows (GpuInterpolation)
};

// One GPU's figures for one epoch of a workload at a batch and a power limit.
struct GpuFigure {
  Seconds time_per_epoch_s = 0.0;
  double average_power_w = 0.0;
  double energy_per_epoch_j = 0.0;  // time_per_epoch_s x average_power_w
  GpuFigureSource source = GpuFigureSource::kMeasured;
};

// One row of zeus-power.csv. The workload is "dataset/network/optimizer", e.g. "imagenet/resnet50/adadelta".
struct GpuPowerRow {
  std::string kind;
  std::string workload;
  std::int64_t batch = 0;
  std::int64_t power_limit_w = 0;
  GpuFigure figure;
};

// How a quantity or an axis is transformed before interpolating linearly: y(x) is found by interpolating value(y)
// linearly in axis(x) between two measured neighbours, then transforming back.
enum class InterpolationScale {
  kLinear,      // as it is
  kLog,         // its natural logarithm
  kReciprocal,  // 1 / it
};
struct InterpolationRule {
  InterpolationScale value = InterpolationScale::kLinear;
  InterpolationScale axis = InterpolationScale::kLinear;
};

// The four rules of figure(). The defaults are those the leave-one-out comparison of docs/energy.md found most
// accurate on Zeus's tables: along the power limit, the epoch rate (1 / time) and the power linear in the limit;
// along the batch, the epoch time linear in 1 / batch (a fixed cost per step plus one per sample) and the power
// linear in log batch.
struct GpuInterpolation {
  InterpolationRule time_in_limit{InterpolationScale::kReciprocal, InterpolationScale::kLinear};
  InterpolationRule power_in_limit{InterpolationScale::kLinear, InterpolationScale::kLinear};
  InterpolationRule time_in_batch{InterpolationScale::kLinear, InterpolationScale::kReciprocal};
  InterpolationRule power_in_batch{InterpolationScale::kLinear, InterpolationScale::kLog};
};

class GpuPowerTable {
 public:
  // Checks the rows: each names a kind and a workload, has batch >= 1, power_limit_w >= 1, positive finite time and
  // power and energy = time x power (relative 1e-9), and each (kind, workload, batch, limit) is given once.
  static Result<GpuPowerTable> create(std::vector<GpuPowerRow> rows, GpuInterpolation interpolation = {});

  // What is measured, each in increasing order: the kinds; the workloads measured on `kind`; the batches of a
  // workload on a kind; the power limits (W) measured at one of those batches. Empty for anything unknown.
  std::vector<std::string> kinds() const;
  std::vector<std::string> workloads(const std::string& kind) const;
  std::vector<std::int64_t> batches(const std::string& kind, const std::string& workload) const;
  std::vector<std::int64_t> power_limits(const std::string& kind, const std::string& workload,
                                         std::int64_t batch) const;

  // The figures of `workload` on one GPU of `kind` at `batch` and `power_limit_w`. A measured point gives its row
  // (kMeasured). At a measured batch, a limit between two measured at that batch is interpolated along the limit; a
  // batch between two measured batches b0 < batch < b1 is interpolated along the batch between the figures at the
  // limit at b0 and at b1 (each measured, or interpolated along the limit at its batch): kInterpolated, with the
  // rules of the table's GpuInterpolation and energy = time x power. Anything else is refused, never extrapolated:
  // an unknown kind or workload (not_found, naming the known ones), or a batch or limit outside the measured range
  // (invalid_argument, naming the measured batches, or the measured limits at the batch concerned).
  Result<GpuFigure> figure(const std::string& kind, const std::string& workload, std::int64_t batch,
                           double power_limit_w) const;

 private:
  using ByLimit = std::map<std::int64_t, GpuFigure>;
  using Key = std::pair<std::string, std::string>;  // kind, workload
  // Along the limit at one measured batch of `key`; the error names the batch's measured limits.
  Result<GpuFigure> at_batch(const Key& key, std::int64_t batch, const ByLimit& limits, double power_limit_w) const;

  std::map<Key, std::map<std::int64_t, ByLimit>> rows_;  // (kind, workload) -> batch -> limit -> figures
  GpuInterpolation interpolation_;
};

// Parse zeus-power.csv (comments start with '#'; errors read "source:line: field 'value' is not valid; expected
// ...", a second row of the same point included), and read a file into a table (errors of create() name the file).
// The rows of one kind and workload must come in increasing batch, then increasing power limit: a limit that steps
// back (non-monotone limits) is refused naming both lines. Power need not grow with the limit: measured averages do
// not always (107 of the 218 measured batches of zeus-power.csv), and some exceed their limit (47 rows, by up to 21%).
Result<std::vector<GpuPowerRow>> parse_gpu_power_rows(std::string_view text, std::string_view source);
Result<GpuPowerTable> read_gpu_power_table(const std::string& path, GpuInterpolation interpolation = {});

}  // namespace omnilearn::traces
