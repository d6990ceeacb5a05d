// The hybrid model against Megatron-LM's published iteration times (traces/devices/megatron-published.csv):
// each run built on DGX A100 nodes (8 GPUs, NVLink inside, 8 x 200 Gb/s out) with the transformer shorthand, 1F1B,
// one micro-batch of one sample unless the row says otherwise; full recomputation adds a forward pass to each
// backward. The A100's efficiency is fitted on the rows named (at most two); every other row is predicted. Pure
// function: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/published_runs.h"

namespace omnilearn::hybrid {

struct PublishedCheck {
  traces::PublishedRun run;
  bool fitted = false;  // used to fit the efficiency (else predicted)
  double efficiency = 0.0;  // of the peak, at this run's per-GPU width
  Seconds predicted_s = 0.0;
  double error = 0.0;   // predicted / published - 1
};

// The A100's efficiency as a function of the per-GPU width x = hidden / tp of a transformer's matrices:
// peak x x / (x + half_width); half_width 0 is a constant efficiency.
struct HybridEfficiencyFit {
  double peak = 0.0;
  double half_width = 0.0;
  Result<double> at(std::int64_t width) const;
};

struct MegatronCheck {
  double efficiency = 0.0;  // the constant efficiency when one row was fitted (else 0)
  HybridEfficiencyFit fit;
  std::vector<PublishedCheck> rows;
};

// `fit_rows`: indices into `runs`. One row fits a constant efficiency; two rows of different per-GPU widths fit
// peak x x / (x + half_width) through both (falling back to their mean, constant, when no such curve passes).
Result<MegatronCheck> check_megatron_runs(const std::vector<traces::PublishedRun>& runs,
                                          const std::vector<std::size_t>& fit_rows);

}  // namespace omnilearn::hybrid
