// StopReason: why a run stopped, for every back end, and the one table of its names (summary.json's "stop_reason",
// the testbed's worker protocol, the Python bindings). Pure values and functions: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace omnilearn::run {

// In increasing precedence: when several fire, the run's reason is the one listed last (StopRule::reason). kNone: the
// run has not stopped.
enum class StopReason { kNone, kEpochs, kSamples, kSteps, kTime, kTarget, kRequested };

// "none", "epochs", "samples", "steps", "time", "target", "requested".
std::string_view to_string(StopReason reason);
// The reason spelled `name` (as to_string writes it); nullopt for any other text.
std::optional<StopReason> parse_stop_reason(std::string_view name);

// A reason as a small integer (its position in the list above), for a number sent between processes (a tensor slot),
// and back; nullopt for a number that names no reason.
constexpr std::int64_t stop_reason_code(StopReason reason) { return static_cast<std::int64_t>(reason); }
std::optional<StopReason> stop_reason_from_code(std::int64_t code);

}  // namespace omnilearn::run
