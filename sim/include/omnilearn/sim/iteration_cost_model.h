// IterationCostModel: what one training iteration costs on each worker — compute flop for a batch
// (c0 + c1 * b) and the gradient bytes to exchange. Immutable after create(): safe to share between threads.
#pragma once

#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::sim {

class IterationCostModel {
 public:
  // Per worker, c0 = model.flops_per_iteration and c1 = model.flops_per_sample; when the profile carries a
  // measured law (compute seconds a + c * b at full speed) it wins and is converted to flop at each node's
  // nominal speed: c0 = a * speed, c1 = c * speed. Gradient bytes default to 4 bytes per parameter.
  // Errors name the model field that is missing or invalid.
  static Result<IterationCostModel> create(const scenarios::ModelProfile& model,
                                           const std::vector<scenarios::NodeSpec>& workers);

  // Flop worker `k` computes for one iteration at batch `b`.
  double flops(WorkerId k, BatchSize b) const;
  // Seconds that iteration takes on worker `k` running at `fraction` of its nominal speed (fraction > 0).
  Seconds seconds(WorkerId k, BatchSize b, double fraction = 1.0) const;
  double gradient_bytes() const { return gradient_bytes_; }
  std::size_t worker_count() const { return c0_.size(); }

 private:
  IterationCostModel() = default;
  std::vector<double> c0_;
  std::vector<double> c1_;
  std::vector<double> speed_;
  double gradient_bytes_ = 0.0;
};

}  // namespace omnilearn::sim
