// Which training samples an ASP worker holds (workload.partition, scenario.h): all of them (iid), or its shards of
// the set sorted by label (sorted-shards). The one home of the split for both back ends: the testbed's ASP worker
// and virtual-time training each give worker k a GlobalSampler over partition_samples(...) of k. Pure functions:
// thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

// The indices (ascending) of the samples worker `worker` of `workers` holds under `spec`, from every training
// sample's label. sorted-shards: the indices sorted by label (a stable sort, so ties keep their order) are cut into
// workers x shards_per_worker shards of equal size (the first `total % shards` one sample longer), and worker k
// holds shards k, k + workers, k + 2 workers, ... Empty for iid (the worker holds everything). Needs worker <
// workers and at least one sample per shard (the scenario parser checks both against dataset_samples).
std::vector<std::int64_t> partition_samples(std::span<const std::int64_t> labels, std::size_t workers,
                                            std::size_t worker, const scenarios::PartitionSpec& spec);

}  // namespace omnilearn::emulator
