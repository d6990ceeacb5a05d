// Units and identifiers shared by every module. Plain value types: thread-safe.
#pragma once

#include <cstdint>

namespace omnilearn {

// Simulated or measured time in seconds. Variables carry a `_s` suffix when the type alone is not enough.
using Seconds = double;

// Dense worker index in [0, number of workers) within one run.
using WorkerId = std::uint32_t;

// Samples in a mini-batch.
using BatchSize = std::int64_t;

}  // namespace omnilearn
