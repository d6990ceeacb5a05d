// The trace file format (traces/FORMAT.md): reading it into an AvailabilityTrace, and writing one atomically.
// Stateless functions: thread-safe (two writers of the same path race on the rename, as with any file).
#pragma once

#include <string>
#include <string_view>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::traces {

// Parses trace text. `source` names the text in errors, which read "source:line: what was wrong, what was
// expected". Never throws.
Result<AvailabilityTrace> parse_trace(std::string_view text, std::string_view source);

// Reads and parses the file at `path`.
Result<AvailabilityTrace> read_trace_file(const std::string& path);

// The canonical text of `trace`: directives, header, then rows sorted by time and worker index. Numbers are
// written in the shortest form that reads back exactly, so parse_trace(format_trace(t)) equals t.
std::string format_trace(const AvailabilityTrace& trace, std::string_view comment = {});

// Writes format_trace(trace, comment) to `path` + ".tmp", then renames it over `path`, so a reader never
// sees a half-written file. On failure the temporary file is removed and `path` is left as it was.
Status write_trace_file(const AvailabilityTrace& trace, const std::string& path, std::string_view comment = {});

}  // namespace omnilearn::traces
