// The hybrid model against Megatron-LM's published iteration times (traces/devices/megatron-published.csv):
// each run built on DGX A100 nodes (8 GPUs, NVLink inside, 8 x 200 Gb/s out) with the transformer shorthand, 1F1B,
// one micro-batch of one sample unless the row says otherwise; full recomputation adds a forward pass to each
// backward. The A100's efficiency is fitted on the rows named (at most two: the least-squares fit of their log
// errors); every other row is predicted. Pure function: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/published_runs.h"

namespace omnilearn::hybrid {

struct PublishedCheck {
  traces::PublishedRun run;
  bool fitted = false;  // used to fit the efficiency (else predicted)
  Seconds predicted_s = 0.0;
  double error = 0.0;   // predicted / published - 1
};

struct MegatronCheck {
  double efficiency = 0.0;  // of the A100's peak, fitted
  std::vector<PublishedCheck> rows;
};

// `fit_rows`: indices into `runs` (one or two).
Result<MegatronCheck> check_megatron_runs(const std::vector<traces::PublishedRun>& runs,
                                          const std::vector<std::size_t>& fit_rows);

}  // namespace omnilearn::hybrid
