// The line protocol between worker processes and the launcher: each record is one text line (tab-separated,
// first field a tag) written to a pipe, so a worker that dies loses at most a partial last line. Pure
// functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "omnilearn/base/status.h"
#include "omnilearn/run/run_writer.h"
#include "omnilearn/run/stop_reason.h"

namespace omnilearn::emulator {

// A number the worker wants in summary.json's "extra" (e.g. controller decision time).
struct ExtraRecord {
  std::string key;
  double value = 0.0;
};
// The worker finished normally, for `reason` (its rule's, run/stop_rule.h; on the line by its name).
struct DoneRecord {
  run::StopReason reason = run::StopReason::kNone;
};
// Launcher -> worker: availability of `worker` changed at `time_s`.
struct AvailabilityNotice {
  WorkerId worker = 0;
  Seconds time_s = 0.0;
  double fraction = 1.0;
};

using WorkerMessage = std::variant<run::IterationRecord, run::PlanRecord, run::EvaluationRecord,
                                   ExtraRecord, DoneRecord, AvailabilityNotice>;

// One line, ending in '\n'.
std::string encode(const WorkerMessage& message);
// Parses one line (without its '\n'); an error names the tag and field.
Result<WorkerMessage> decode(std::string_view line);

}  // namespace omnilearn::emulator
