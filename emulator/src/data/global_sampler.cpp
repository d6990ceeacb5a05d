#include "omnilearn/emulator/global_sampler.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "omnilearn/base/check.h"

namespace omnilearn::emulator {

std::vector<BatchSize> split_proportionally(BatchSize total, std::span<const BatchSize> weights) {
  const BatchSize sum = std::accumulate(weights.begin(), weights.end(), BatchSize{0});
  OMNI_CHECK(sum > 0 && total >= 0, "split_proportionally needs positive weights");
  std::vector<BatchSize> part(weights.size(), 0);
  std::vector<std::pair<BatchSize, std::size_t>> remainder;  // (numerator remainder, index)
  BatchSize given = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    part[k] = total * weights[k] / sum;
    given += part[k];
    remainder.emplace_back(total * weights[k] % sum, k);
  }
  std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; given < total; ++i, ++given) ++part[remainder[i % remainder.size()].second];
  return part;
}

GlobalSampler::GlobalSampler(std::int64_t samples, std::uint64_t seed) : samples_(samples), seed_(seed) {
  OMNI_CHECK(samples > 0, "GlobalSampler needs samples > 0");
}

GlobalSampler::GlobalSampler(std::vector<std::int64_t> subset, std::uint64_t seed)
    : samples_(static_cast<std::int64_t>(subset.size())), seed_(seed), subset_(std::move(subset)) {
  OMNI_CHECK(samples_ > 0, "GlobalSampler needs a subset with samples");
}

void GlobalSampler::start_epoch(std::int64_t epoch) {
  epoch_ = epoch;
  position_ = 0;
  step_in_epoch_ = 0;
  permutation_.resize(static_cast<std::size_t>(samples_));
  std::iota(permutation_.begin(), permutation_.end(), std::int64_t{0});
  // Fisher-Yates with the raw engine (std distributions differ between standard libraries).
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(epoch) + 1);
  for (std::size_t i = permutation_.size() - 1; i > 0; --i) {
    const std::size_t j = static_cast<std::size_t>(rng() % (i + 1));
    std::swap(permutation_[i], permutation_[j]);
  }
  if (!subset_.empty()) {
    for (std::int64_t& i : permutation_) i = subset_[static_cast<std::size_t>(i)];
  }
}

StepAssignment GlobalSampler::next(std::span<const BatchSize> batch) {
  if (epoch_ < 0 || position_ >= samples_) start_epoch(epoch_ + 1);
  StepAssignment a;
  a.epoch = epoch_;
  a.step_in_epoch = step_in_epoch_++;
  const BatchSize want = std::accumulate(batch.begin(), batch.end(), BatchSize{0});
  OMNI_CHECK(want > 0, "GlobalSampler::next needs a positive total batch");
  const BatchSize left = samples_ - position_;
  a.batch.assign(batch.begin(), batch.end());
  if (left <= want) {
    a.batch = split_proportionally(left, batch);
    a.last_in_epoch = true;
  }
  a.offset.resize(batch.size());
  for (std::size_t k = 0; k < batch.size(); ++k) {
    a.offset[k] = position_;
    position_ += a.batch[k];
  }
  return a;
}

std::span<const std::int64_t> GlobalSampler::indices(const StepAssignment& step, std::size_t worker) const {
  OMNI_CHECK(step.epoch == epoch_, "indices() of a step from another epoch");
  return std::span<const std::int64_t>(permutation_).subspan(static_cast<std::size_t>(step.offset[worker]),
                                                               static_cast<std::size_t>(step.batch[worker]));
}

}  // namespace omnilearn::emulator
