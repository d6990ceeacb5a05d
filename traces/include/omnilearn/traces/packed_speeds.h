// Packed speeds: the fraction of its speed alone each of two one-worker jobs keeps when both train on one device
// (space sharing), from the shipped table traces/devices/packed-speeds.csv (Gavel's measurements, docs/jobs.md).
// Immutable after creation: thread-safe to share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::traces {

// One measured pair on one device kind: `model_a` at `batch_a` keeps `fraction_a` of its speed alone, `model_b` at
// `batch_b` keeps `fraction_b`. Fractions of 0 mean the pair was measured not to fit (it is never packed).
struct PackedPair {
  std::string device;
  std::string model_a;
  std::int64_t batch_a = 0;
  std::string model_b;
  std::int64_t batch_b = 0;
  double fraction_a = 0.0;
  double fraction_b = 0.0;
};

// The fractions two jobs keep, in the order asked.
struct PackedFractions {
  double first = 0.0;
  double second = 0.0;
};

class PackedSpeedTable {
 public:
  // Checks every pair: a device and two models named, batches >= 1, fractions in [0, 1.5], no pair twice.
  static Result<PackedSpeedTable> create(std::vector<PackedPair> pairs);

  const std::vector<PackedPair>& pairs() const { return pairs_; }

  // The fractions of `model_1` at `batch_1` and `model_2` at `batch_2` packed on one device of `device`: those of
  // the measured pair of the two models on that kind with the nearest batches (least |log(b1/m1)| + |log(b2/m2)|;
  // ties: the first in the table). Nothing when the two models were not measured together on that kind or the
  // nearest pair's fractions are 0 (does not fit): such jobs are never packed.
  std::optional<PackedFractions> fractions(std::string_view device, std::string_view model_1, std::int64_t batch_1,
                                           std::string_view model_2, std::int64_t batch_2) const;

 private:
  explicit PackedSpeedTable(std::vector<PackedPair> pairs) : pairs_(std::move(pairs)) {}
  std::vector<PackedPair> pairs_;
};

inline constexpr std::string_view kPackedSpeedsHeader = "device,model_a,batch_a,model_b,batch_b,fraction_a,fraction_b";

// Parse the table (comments start with '#'; errors read "source:line: ..."), and read a file into a table.
Result<std::vector<PackedPair>> parse_packed_pairs(std::string_view text, std::string_view source);
Result<PackedSpeedTable> read_packed_speed_table(const std::string& path);

}  // namespace omnilearn::traces
