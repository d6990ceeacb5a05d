#include "omnilearn/energy_control/gpu_cluster_model.h"

#include "omnilearn/hybrid/stage_costs.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

namespace omnilearn::energy_control {
namespace {

Status check_spec(const GpuClusterSpec& spec) {
  if (spec.kinds.empty()) return Status::invalid_argument("the cluster has no workers");
  if (spec.samples_per_epoch < 1) return Status::invalid_argument("samples_per_epoch must be >= 1");
  if (!(spec.gradient_bytes > 0.0) || !(spec.bandwidth_bytes_per_s > 0.0)) {
    return Status::invalid_argument("gradient_bytes and bandwidth_bytes_per_s must be > 0");
  }
  if (!(spec.eta >= 0.0 && spec.eta <= 1.0)) return Status::invalid_argument("eta must be in [0, 1]");
  return Status::ok();
}

// The limits measured at every one of `batches` (increasing).
std::vector<std::int64_t> common_limits(const traces::GpuPowerTable& table, const std::string& kind,
                                        const std::string& workload, const std::vector<std::int64_t>& batches) {
  std::vector<std::int64_t> common = table.power_limits(kind, workload, batches.front());
  for (const std::int64_t b : batches) {
    const auto here = table.power_limits(kind, workload, b);
    std::vector<std::int64_t> kept;
    std::set_intersection(common.begin(), common.end(), here.begin(), here.end(), std::back_inserter(kept));
    common = std::move(kept);
  }
  return common;
}

// One kind's worker model (batches capped at `cap`), wait power included.
Result<controller::WorkerPowerModel> kind_model(const traces::GpuPowerTable& table, const std::string& kind,
                                                const GpuClusterSpec& spec) {
  const auto batches = table.batches(kind, spec.workload);
  if (batches.empty()) {
    auto probe = table.figure(kind, spec.workload, 1, 1.0);  // the table's message names what is known
    return probe ? Status::not_found(kind + " has no rows of " + spec.workload) : probe.status();
  }
  controller::WorkerPowerModel w;
  w.lo = batches.front();
  w.hi = std::min<BatchSize>(batches.back(), spec.global_batch);
  if (w.hi < w.lo) {
    return Status::invalid_argument(kind + ": global batch " + std::to_string(spec.global_batch) +
                                    " is below its smallest measured batch " + std::to_string(w.lo));
  }
  auto wait = lowest_measured_power(table, kind);
  if (!wait) return wait.status();
  w.wait_power_w = *wait;
  const double per_sample = 1.0 / static_cast<double>(spec.samples_per_epoch);
  for (const std::int64_t limit : common_limits(table, kind, spec.workload, batches)) {
    controller::PowerLimitCurve curve;
    curve.limit_w = static_cast<double>(limit);
    for (BatchSize b = w.lo; b <= w.hi; ++b) {
      auto f = table.figure(kind, spec.workload, b, curve.limit_w);
      if (!f) return f.status().with_context(kind + " at batch " + std::to_string(b));
      curve.time_s.push_back(f->time_per_epoch_s * static_cast<double>(b) * per_sample);
      curve.power_w.push_back(f->average_power_w);
    }
    w.limits.push_back(std::move(curve));
  }
  if (w.limits.empty()) return Status::not_found(kind + ": no limit is measured at all its batches");
  return w;
}

}  // namespace

Result<double> lowest_measured_power(const traces::GpuPowerTable& table, const std::string& kind) {
  double lowest = std::numeric_limits<double>::infinity();
  for (const auto& workload : table.workloads(kind)) {
    for (const std::int64_t b : table.batches(kind, workload)) {
      for (const std::int64_t l : table.power_limits(kind, workload, b)) {
        auto f = table.figure(kind, workload, b, static_cast<double>(l));
        if (!f) return f.status();
        lowest = std::min(lowest, f->average_power_w);
      }
    }
  }
  if (!std::isfinite(lowest)) return Status::not_found("no measured rows of kind '" + kind + "'");
  return lowest;
}

Result<GpuClusterModel> build_gpu_cluster_model(const traces::GpuPowerTable& table, const GpuClusterSpec& spec) {
  OMNI_RETURN_IF_ERROR(check_spec(spec));
  std::map<std::string, controller::WorkerPowerModel> by_kind;
  GpuClusterModel model;
  model.kinds = spec.kinds;
  model.samples_per_epoch = spec.samples_per_epoch;
  model.global_batch = spec.global_batch;
  model.cost.eta = spec.eta;
  model.cost.comm_s = hybrid::ring_allreduce_s(static_cast<std::int64_t>(spec.kinds.size()), spec.gradient_bytes,
                                             spec.bandwidth_bytes_per_s, /*latency_s=*/0.0);
  BatchSize sum_lo = 0;
  BatchSize sum_hi = 0;
  for (const auto& kind : spec.kinds) {
    auto it = by_kind.find(kind);
    if (it == by_kind.end()) {
      auto w = kind_model(table, kind, spec);
      if (!w) return w.status();
      it = by_kind.emplace(kind, std::move(*w)).first;
    }
    model.workers.push_back(it->second);
    model.cost.max_power_w += it->second.limits.back().limit_w;
    sum_lo += it->second.lo;
    sum_hi += it->second.hi;
  }
  if (spec.global_batch < sum_lo || spec.global_batch > sum_hi) {
    return Status::invalid_argument("global batch " + std::to_string(spec.global_batch) + " outside the workers' [" +
                                    std::to_string(sum_lo) + ", " + std::to_string(sum_hi) + "]");
  }
  return model;
}

}  // namespace omnilearn::energy_control
