#include "omnilearn/energy_control/data_parallel_prediction.h"

#include <cstdio>
#include <utility>

#include "omnilearn/controller/joint_power_plan.h"

namespace omnilearn::energy_control {
namespace {

// The points of N GPUs at per-GPU batch b: one cluster model, one joint_step_cost per limit.
Status add_points(const traces::GpuPowerTable& table, const std::string& kind, GpuClusterSpec spec, std::int64_t n,
                  BatchSize b, std::vector<DataParallelPoint>& out) {
  spec.kinds.assign(static_cast<std::size_t>(n), kind);
  spec.global_batch = n * b;
  auto model = build_gpu_cluster_model(table, spec);
  if (!model) return model.status().with_context(kind + " x" + std::to_string(n) + " at batch " + std::to_string(b));
  const std::vector<BatchSize> batch(static_cast<std::size_t>(n), b);
  const double steps = model->steps_per_epoch();
  for (std::size_t l = 0; l < model->workers.front().limits.size(); ++l) {
    const std::vector<std::size_t> limit(static_cast<std::size_t>(n), l);
    auto cost = controller::joint_step_cost(model->workers, batch, limit, model->cost);
    if (!cost) return cost.status();
    DataParallelPoint p;
    p.kind = kind;
    p.workload = spec.workload;
    p.gpus = n;
    p.batch_per_gpu = b;
    p.power_limit_w = model->workers.front().limits[l].limit_w;
    p.allreduce_s = model->cost.comm_s;
    p.compute_s = cost->step_s - p.allreduce_s;
    p.step_s = cost->step_s;
    p.energy_per_gpu_step_j = cost->energy_j / static_cast<double>(n);
    p.steps_per_epoch = steps;
    p.energy_per_gpu_epoch_j = p.energy_per_gpu_step_j * steps;
    p.epoch_s = p.step_s * steps;
    out.push_back(std::move(p));
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<DataParallelPoint>> predict_data_parallel(const traces::GpuPowerTable& table,
                                                             const std::string& kind, const GpuClusterSpec& base,
                                                             std::span<const std::int64_t> gpus,
                                                             std::span<const BatchSize> batches_per_gpu) {
  std::vector<BatchSize> batches(batches_per_gpu.begin(), batches_per_gpu.end());
  if (batches.empty()) batches = table.batches(kind, base.workload);
  if (batches.empty()) {
    auto probe = table.figure(kind, base.workload, 1, 1.0);  // the table's message names what is known
    return probe ? Status::not_found(kind + " has no rows of " + base.workload) : probe.status();
  }
  std::vector<DataParallelPoint> out;
  for (const std::int64_t n : gpus) {
    if (n < 1) return Status::invalid_argument("gpus must be >= 1, got " + std::to_string(n));
    for (const BatchSize b : batches) OMNI_RETURN_IF_ERROR(add_points(table, kind, base, n, b, out));
  }
  return out;
}

std::string format_data_parallel_csv(const std::vector<DataParallelPoint>& points) {
  std::string out = std::string(kDataParallelCsvHeader) + "\n";
  char line[512];
  for (const auto& p : points) {
    std::snprintf(line, sizeof line, "%s,%s,%lld,%lld,%.0f,%.6f,%.6f,%.3f,%.1f,%.1f\n", p.kind.c_str(),
                  p.workload.c_str(), static_cast<long long>(p.gpus), static_cast<long long>(p.batch_per_gpu),
                  p.power_limit_w, p.step_s, p.allreduce_s, p.energy_per_gpu_step_j, p.energy_per_gpu_epoch_j,
                  p.epoch_s);
    out += line;
  }
  return out;
}

}  // namespace omnilearn::energy_control
