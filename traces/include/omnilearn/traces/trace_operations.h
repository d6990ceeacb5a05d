// Operations on availability traces: select, rename, map nodes onto workers, scale time, clip, resample,
// combine. Each returns a new validated trace and leaves its input unchanged. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::traces {

// The named workers, in the order given. Fails on an unknown name.
Result<AvailabilityTrace> select_workers(const AvailabilityTrace& trace, const std::vector<std::string>& names);

// Renames workers by (old, new) pairs; unnamed workers keep their names. Fails on an unknown old name or if
// the result has duplicate names.
Result<AvailabilityTrace> rename_workers(const AvailabilityTrace& trace,
                                         const std::vector<std::pair<std::string, std::string>>& renames);

// M workers named w0..w{M-1}; worker j follows trace node j mod N (N = trace.worker_count()).
Result<AvailabilityTrace> map_round_robin(const AvailabilityTrace& trace, std::size_t worker_count);

// One worker per entry, named w0..; worker j follows the trace node called node_names[j] (repeats allowed).
Result<AvailabilityTrace> map_by_names(const AvailabilityTrace& trace, const std::vector<std::string>& node_names);

// Multiplies every time (changes, duration, loop period) by factor > 0: 1 day at factor 1/8640 lasts 10 s.
Result<AvailabilityTrace> scale_time(const AvailabilityTrace& trace, double factor);

// scale_time with the factor that makes the duration `target_s` (> 0). Fails on a zero-length trace.
Result<AvailabilityTrace> scale_to_duration(const AvailabilityTrace& trace, Seconds target_s);

// The window [t0_s, t1_s) re-based so that t0_s becomes 0; the result lasts t1_s - t0_s and does not loop.
// A looping input is unrolled; a non-looping one holds its last value past its duration.
Result<AvailabilityTrace> clip(const AvailabilityTrace& trace, Seconds t0_s, Seconds t1_s);

// Each step [k*step, (k+1)*step) (the last one cut at the duration) gets the time-weighted mean fraction
// over it. Duration and loop period are kept.
Result<AvailabilityTrace> resample(const AvailabilityTrace& trace, Seconds step_s);

// Worker k of the result has fraction base_k(t) * noise_k(t): workers are matched by index and named as in
// `base`, so both must have the same worker count. A 0 in either means down. The result lasts the longer
// of the two durations (each input loops or holds as its own rules say) and does not loop.
Result<AvailabilityTrace> combine(const AvailabilityTrace& base, const AvailabilityTrace& noise);

}  // namespace omnilearn::traces
