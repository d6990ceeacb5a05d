#include "omnilearn/traces/energy_to_accuracy.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace omnilearn::traces {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string job_name(const std::string& kind, const ZeusJob& job) {
  return "workload '" + job.workload + "' on '" + kind + "' toward target " + number(job.target_metric);
}

// The point of least cost among those `keep` selects; points are ordered by batch then limit, so the first of equal
// costs is the smaller batch, then the lower limit. Nothing when none is kept.
template <typename Keep>
std::optional<ToAccuracyPoint> least_cost(const std::vector<ToAccuracyPoint>& points, Keep keep) {
  std::optional<ToAccuracyPoint> best;
  for (const ToAccuracyPoint& p : points) {
    if (keep(p) && (!best || p.cost_j < best->cost_j)) best = p;
  }
  return best;
}

double saving(double point, double baseline) { return 100.0 * (1.0 - point / baseline); }

}  // namespace

std::optional<double> expected_epochs_to_target(const std::vector<ZeusRun>& runs, std::int64_t max_epochs) {
  double epochs = 0.0;
  std::int64_t reached = 0;
  for (const ZeusRun& r : runs) {
    const bool ok = r.target_epoch && *r.target_epoch <= max_epochs;
    epochs += static_cast<double>(ok ? *r.target_epoch : max_epochs);
    reached += ok ? 1 : 0;
  }
  if (reached == 0) return std::nullopt;
  return epochs / static_cast<double>(reached);
}

Result<EnergyToAccuracy> energy_to_accuracy(const GpuPowerTable& power, const ZeusTrainTrace& train,
                                            const std::string& kind, const ZeusJob& job, double eta) {
  if (!(eta >= 0.0 && eta <= 1.0)) {
    return Status::invalid_argument("eta " + number(eta) + " of " + job_name(kind, job) + ": expected 0 to 1");
  }
  if (job.max_epochs < 1 || job.default_batch < 1) {
    return Status::invalid_argument("max_epochs " + std::to_string(job.max_epochs) + " and default_batch " +
                                    std::to_string(job.default_batch) + " of " + job_name(kind, job) +
                                    ": expected each >= 1");
  }
  const std::vector<std::int64_t> measured = power.batches(kind, job.workload);
  if (measured.empty()) {
    // figure() names the known kinds or the workloads measured on the kind.
    return power.figure(kind, job.workload, job.default_batch, 1.0).status();
  }
  if (train.batches(job.workload, job.target_metric).empty()) {
    std::string known;
    for (const double t : train.targets(job.workload)) known += (known.empty() ? "" : ", ") + number(t);
    return Status::not_found("no training runs of " + job_name(kind, job) +
                             " (targets trained: " + (known.empty() ? "none" : known) + ")");
  }

  EnergyToAccuracy out;
  out.kind = kind;
  out.job = job;
  out.eta = eta;
  out.default_batch = std::min(job.default_batch, measured.back());
  for (const std::int64_t b : measured) {
    for (const std::int64_t l : power.power_limits(kind, job.workload, b)) {
      out.max_power_w = std::max(out.max_power_w, static_cast<double>(l));
    }
  }
  for (const std::int64_t b : measured) {
    const std::vector<ZeusRun> runs = train.runs(job.workload, job.target_metric, b);
    if (runs.empty()) {
      out.untrained_batches.push_back(b);
      continue;
    }
    const std::optional<double> epochs = expected_epochs_to_target(runs, job.max_epochs);
    if (!epochs) {
      out.unreached_batches.push_back(b);
      continue;
    }
    std::int64_t reached = 0;
    for (const ZeusRun& r : runs) reached += (r.target_epoch && *r.target_epoch <= job.max_epochs) ? 1 : 0;
    for (const std::int64_t l : power.power_limits(kind, job.workload, b)) {
      auto f = power.figure(kind, job.workload, b, static_cast<double>(l));
      if (!f.is_ok()) return f.status();  // a listed point is measured: cannot fail
      ToAccuracyPoint p;
      p.batch = b;
      p.power_limit_w = l;
      p.expected_epochs = *epochs;
      p.reach_fraction = static_cast<double>(reached) / static_cast<double>(runs.size());
      p.energy_j = *epochs * f->energy_per_epoch_j;
      p.time_s = *epochs * f->time_per_epoch_s;
      p.cost_j = eta * p.energy_j + (1.0 - eta) * out.max_power_w * p.time_s;
      out.points.push_back(p);
    }
  }

  const std::int64_t b0 = out.default_batch;
  const auto is_max = [&](const ToAccuracyPoint& p) { return static_cast<double>(p.power_limit_w) == out.max_power_w; };
  const std::optional<ToAccuracyPoint> baseline =
      least_cost(out.points, [&](const ToAccuracyPoint& p) { return p.batch == b0 && is_max(p); });
  if (!baseline) {
    const auto has = [](const std::vector<std::int64_t>& v, std::int64_t b) {
      return std::find(v.begin(), v.end(), b) != v.end();
    };
    std::string why = "is not measured at " + number(out.max_power_w) + " W";
    if (!has(measured, b0)) why = "is not a measured batch";
    if (has(out.untrained_batches, b0)) why = "has no training runs";
    if (has(out.unreached_batches, b0))
      why = "never reached the target within " + std::to_string(job.max_epochs) + " epochs";
    return Status::invalid_argument("default batch " + std::to_string(b0) + " of " + job_name(kind, job) + " " + why +
                                    "; expected a baseline at the default batch and the largest limit");
  }
  out.baseline = *baseline;
  out.best = *least_cost(out.points, [](const ToAccuracyPoint&) { return true; });
  out.best_batch = *least_cost(out.points, is_max);
  out.best_limit = *least_cost(out.points, [&](const ToAccuracyPoint& p) { return p.batch == b0; });
  return out;
}

double cost_saving_pct(const ToAccuracyPoint& point, const ToAccuracyPoint& baseline) {
  return saving(point.cost_j, baseline.cost_j);
}

double energy_saving_pct(const ToAccuracyPoint& point, const ToAccuracyPoint& baseline) {
  return saving(point.energy_j, baseline.energy_j);
}

double time_saving_pct(const ToAccuracyPoint& point, const ToAccuracyPoint& baseline) {
  return saving(point.time_s, baseline.time_s);
}

}  // namespace omnilearn::traces
