#include "omnilearn/emulator/data_partition.h"

#include <algorithm>
#include <numeric>

#include "omnilearn/base/check.h"

namespace omnilearn::emulator {

std::vector<std::int64_t> partition_samples(std::span<const std::int64_t> labels, std::size_t workers,
                                            std::size_t worker, const scenarios::PartitionSpec& spec) {
  if (spec.kind == scenarios::PartitionKind::kIid) return {};
  OMNI_CHECK(worker < workers && spec.shards_per_worker > 0, "partition_samples: worker out of range");
  const std::size_t total = labels.size();
  const std::size_t shards = workers * static_cast<std::size_t>(spec.shards_per_worker);
  OMNI_CHECK(shards <= total, "partition_samples: more shards than samples");
  std::vector<std::int64_t> order(total);
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return labels[static_cast<std::size_t>(a)] < labels[static_cast<std::size_t>(b)];
  });
  // Shard s covers [start(s), start(s + 1)) of `order`: size total / shards, the first total % shards one longer.
  const std::size_t base = total / shards;
  const std::size_t longer = total % shards;
  auto start = [&](std::size_t s) { return s * base + std::min(s, longer); };
  std::vector<std::int64_t> mine;
  for (std::size_t s = worker; s < shards; s += workers) {
    mine.insert(mine.end(), order.begin() + static_cast<std::ptrdiff_t>(start(s)),
                order.begin() + static_cast<std::ptrdiff_t>(start(s + 1)));
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

}  // namespace omnilearn::emulator
