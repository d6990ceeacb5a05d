// The resolved Scenario as JSON, for a run folder's manifest.json: every field after defaults, presets,
// units and paths were resolved. Pure function: thread-safe.
#pragma once

#include <string>

#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// A JSON object (keys in schema order, numbers in shortest round-trip form, SI units: flop/s, bytes/s, s).
// Deterministic: the same Scenario gives the same bytes.
std::string scenario_to_json(const Scenario& scenario);

}  // namespace omnilearn::scenarios
