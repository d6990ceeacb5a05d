// Input limits: the one place that bounds what an input file or option may ask for, so that a hostile or
// mistaken input fails with a message naming the field and the limit before memory or time runs out.
// Constants only: thread-safe. The README section "Hostile input and fuzzing" lists them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace omnilearn::limits {

// Points (changes) in one availability trace, all workers together: read, imported or generated.
inline constexpr std::size_t kMaxTracePoints = 10'000'000;
// Workers in a cluster (a preset's `workers`, the sum of `count`s) or in a trace.
inline constexpr std::size_t kMaxWorkers = 1'000'000;
// Jobs in one job file (read, imported or generated; traces/JOBS.md).
inline constexpr std::size_t kMaxJobs = 1'000'000;
// Nodes in one rank's Chakra execution trace (traces/chakra_trace.h).
inline constexpr std::size_t kMaxChakraNodes = 10'000'000;
// Training iterations a scenario may ask for: epochs x steps per epoch, a sample budget, max_iterations.
inline constexpr std::int64_t kMaxIterations = 1'000'000'000;
// Bytes of one record of a CSV file (a job file, a device table, a trace to import): a quoted field may span lines
// (RFC 4180), and a quote never closed is refused here instead of reading the rest of the file as one field.
inline constexpr std::size_t kMaxRecordBytes = 1 << 20;
// Points of one sweep (the product of its axes' sizes and its bases).
inline constexpr std::size_t kMaxSweepPoints = 100'000;
// Bytes of a name that becomes a file, folder or cgroup name (a scenario's or sweep's `name`, a label).
inline constexpr std::size_t kMaxNameBytes = 128;
// Nesting of mappings and sequences in a YAML file (real scenarios use fewer than 8 levels).
inline constexpr int kMaxYamlDepth = 64;
// Nodes of a YAML document once its aliases are expanded (an alias bomb is refused, not expanded).
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;

}  // namespace omnilearn::limits
