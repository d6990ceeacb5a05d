#include "omnilearn/run/gpu_table_power.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "omnilearn/base/format.h"

namespace omnilearn::run {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Result<LowestGpuRow> lowest_gpu_row(const traces::GpuPowerTable& table, const std::string& kind) {
  LowestGpuRow best{std::numeric_limits<double>::infinity(), ""};
  for (const std::string& w : table.workloads(kind)) {
    for (std::int64_t b : table.batches(kind, w)) {
      for (std::int64_t l : table.power_limits(kind, w, b)) {
        auto f = table.figure(kind, w, b, static_cast<double>(l));
        if (!f || f->average_power_w >= best.average_power_w) continue;
        best = {f->average_power_w, w + ", batch " + std::to_string(b) + ", " + std::to_string(l) + " W"};
      }
    }
  }
  if (best.where.empty()) return Status::not_found("no measured rows for GPU kind '" + kind + "'");
  return best;
}

Status resolve_gpu_table(scenarios::DevicePower& d, const traces::GpuPowerTable& table, bool set_idle,
                         const std::string& field) {
  const scenarios::GpuTableRef& ref = *d.table;
  const std::vector<std::string> workloads = table.workloads(ref.kind);
  if (workloads.empty()) {
    return Status::invalid_argument(field + ".kind: '" + ref.kind + "' is not in the measured table (kinds: " +
                                    joined(table.kinds()) + ")");
  }
  const std::vector<std::int64_t> batches = table.batches(ref.kind, ref.workload);
  if (batches.empty()) {
    return Status::invalid_argument(field + ".workload: '" + ref.workload + "' is not measured on " + ref.kind +
                                    " (workloads: " + joined(workloads) + ")");
  }
  std::vector<std::pair<double, double>> curve;
  bool interpolated = false;
  for (std::int64_t b : batches) {
    auto f = table.figure(ref.kind, ref.workload, b, ref.power_limit_w);
    if (!f) return Status::invalid_argument(field + ".power_limit: " + f.status().message());
    interpolated = interpolated || f->source == traces::GpuFigureSource::kInterpolated;
    curve.emplace_back(static_cast<double>(b), f->average_power_w);
  }
  d.busy_w.reset();
  d.busy_by_batch = std::move(curve);
  d.busy_from = std::string(scenarios::kFromMeasuredTable) + " (" + ref.kind + " " + ref.workload + ", " +
                format_g(ref.power_limit_w) + " W" + (interpolated ? ", interpolated along the limit" : "") +
                "; batches " + std::to_string(batches.front()) + "-" + std::to_string(batches.back()) +
                (ref.refuse_outside ? "" : ", flat outside") + ")";
  auto low = lowest_gpu_row(table, ref.kind);
  if (!low) return Status::invalid_argument(field + ".kind: " + low.status().message());
  const std::string lowest = ref.kind + "'s lowest measured power, " + low->where;
  if (set_idle) {
    d.idle_w = low->average_power_w;
    d.idle_from = std::string(scenarios::kFromMeasuredTable) + " (upper bound of idle: " + lowest +
                  "; the table has no idle rows)";
  }
  // Waiting and communicating (auto): no measured blocking power was found to cite, so the same upper bound.
  d.blocked_w = low->average_power_w;
  d.blocked_from = std::string(scenarios::kFromMeasuredTable) + " (upper bound of idle: " + lowest + ")";
  return Status::ok();
}

std::pair<double, double> table_batch_range(const scenarios::DevicePower& d) {
  if (d.busy_by_batch.empty()) return {1.0, std::numeric_limits<double>::infinity()};
  return {d.busy_by_batch.front().first, d.busy_by_batch.back().first};
}

}  // namespace omnilearn::run
