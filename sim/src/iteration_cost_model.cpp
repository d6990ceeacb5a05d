#include "omnilearn/sim/iteration_cost_model.h"

#include <cmath>
#include <string>

namespace omnilearn::sim {
namespace {

bool positive(double v) { return v > 0.0 && std::isfinite(v); }
bool non_negative(double v) { return v >= 0.0 && std::isfinite(v); }

}  // namespace

Result<IterationCostModel> IterationCostModel::create(const scenarios::ModelProfile& model,
                                                      const std::vector<scenarios::NodeSpec>& workers) {
  const std::string where = "workload.model '" + model.name + "'";
  const bool measured = model.measured_fixed_s.has_value() || model.measured_per_sample_s.has_value();
  if (measured) {
    if (!non_negative(model.measured_fixed_s.value_or(0.0))) {
      return Status::invalid_argument(where + ": measured_fixed_s must be >= 0");
    }
    if (!positive(model.measured_per_sample_s.value_or(0.0))) {
      return Status::invalid_argument(where + ": measured_per_sample_s must be > 0");
    }
  } else {
    if (!positive(model.flops_per_sample)) return Status::invalid_argument(where + ": flops_per_sample must be > 0");
    if (!non_negative(model.flops_per_iteration)) {
      return Status::invalid_argument(where + ": flops_per_iteration must be >= 0");
    }
  }
  IterationCostModel m;
  m.gradient_bytes_ = model.gradient_bytes > 0.0 ? model.gradient_bytes : 4.0 * model.parameters;
  if (!non_negative(m.gradient_bytes_)) return Status::invalid_argument(where + ": gradient_bytes must be >= 0");
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const double speed = workers[k].speed_flops;
    if (!positive(speed)) {
      return Status::invalid_argument("cluster.workers[" + std::to_string(k) + "].speed_flops: must be > 0");
    }
    m.speed_.push_back(speed);
    if (measured) {
      m.c0_.push_back(model.measured_fixed_s.value_or(0.0) * speed);
      m.c1_.push_back(*model.measured_per_sample_s * speed);
    } else {
      m.c0_.push_back(model.flops_per_iteration);
      m.c1_.push_back(model.flops_per_sample);
    }
  }
  return m;
}

double IterationCostModel::flops(WorkerId k, BatchSize b) const {
  return c0_.at(k) + c1_.at(k) * static_cast<double>(b);
}

Seconds IterationCostModel::seconds(WorkerId k, BatchSize b, double fraction) const {
  return flops(k, b) / (speed_.at(k) * fraction);
}

}  // namespace omnilearn::sim
