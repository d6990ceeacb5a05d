// The time-driven part of a scenario's availability (a schedule in seconds, a trace file, a generator, and the
// noise trace on top) resolved into one AvailabilityTrace with one series per worker; shared by the simulator and
// the testbed. Pure apart from reading trace files: thread-safe.
#pragma once

#include <optional>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::scenarios {

// The timed availability of `scenario` for its workers (worker k of the result is worker k), in the back end's
// seconds (simulated or wall); nullopt when nothing changes over time (no availability, or only an epoch
// schedule without noise).
// Errors name the field or file at fault; a generator kind the traces library lacks is "not yet supported".
Result<std::optional<traces::AvailabilityTrace>> timed_availability(const Scenario& scenario);

}  // namespace omnilearn::scenarios
