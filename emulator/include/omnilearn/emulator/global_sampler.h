// GlobalSampler: one seeded permutation of the training set per epoch, cut into BSP steps. Each step takes the
// next Σb samples and gives worker k a contiguous run of b_k of them; the last step of an epoch splits what is
// left in proportion to the batches, so every epoch covers the data exactly once. Every worker runs its own
// copy with the same seed and batches and so computes the same assignment. An ASP worker that holds only part of
// the data (data_partition.h) walks a sampler over its own samples. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "omnilearn/base/units.h"

namespace omnilearn::emulator {

struct StepAssignment {
  std::int64_t epoch = 0;
  std::int64_t step_in_epoch = 0;
  bool last_in_epoch = false;
  std::vector<BatchSize> batch;              // samples each worker actually gets (the remainder step shrinks them)
  std::vector<std::int64_t> offset;          // where worker k's samples start in the epoch's permutation
};

class GlobalSampler {
 public:
  // `samples` > 0 training samples; the permutation of epoch e depends only on (seed, e).
  GlobalSampler(std::int64_t samples, std::uint64_t seed);
  // Over the sample indices `subset` only (not empty): each epoch is a seeded permutation of them, drawn as the
  // permutation of subset.size() samples is and mapped through `subset`.
  GlobalSampler(std::vector<std::int64_t> subset, std::uint64_t seed);

  // Assigns the next step for `batch` (per worker, >= 0, not all 0). Starts a new epoch when the previous
  // one is used up.
  StepAssignment next(std::span<const BatchSize> batch);
  // Sample indices of worker k in `step` (valid until the next call of next()).
  std::span<const std::int64_t> indices(const StepAssignment& step, std::size_t worker) const;

  std::int64_t epoch() const { return epoch_; }
  std::int64_t samples() const { return samples_; }

 private:
  void start_epoch(std::int64_t epoch);

  std::int64_t samples_;
  std::uint64_t seed_;
  std::int64_t epoch_ = -1;
  std::int64_t position_ = 0;   // samples of the current epoch already handed out
  std::int64_t step_in_epoch_ = 0;
  std::vector<std::int64_t> permutation_;
  std::vector<std::int64_t> subset_;  // empty: every sample 0..samples_-1
};

// Splits `total` in proportion to `weights` (>= 0, not all 0) by largest remainder; the parts sum to `total`.
std::vector<BatchSize> split_proportionally(BatchSize total, std::span<const BatchSize> weights);

}  // namespace omnilearn::emulator
