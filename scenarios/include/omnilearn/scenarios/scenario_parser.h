// The scenario parser: the one place where scenario YAML becomes a typed, validated Scenario. Every error
// names the file, line and field ("x.yaml:12: cluster.nodes[2].speed: expected a positive number, got "-3"").
// Stateless functions: thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// Reads and parses the scenario file at `path`. `overrides` are `path.to.key=value` strings (the CLI's
// --set), applied in order to the YAML tree before validation: the value is parsed as YAML (a scalar, or a
// flow sequence/mapping such as `[{at: 0, cores: [12, 12]}]`), `key=~` removes a key, and `a.b[2].c` indexes
// a sequence. An override that names an unknown key is an error like any unknown key.
Result<Scenario> load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

// As load_scenario, from text. `source_name` is used in messages, as the default scenario name (its stem), and
// its folder resolves relative paths (trace and model profile files).
Result<Scenario> parse_scenario(std::string_view yaml_text, const std::string& source_name,
                                const std::vector<std::string>& overrides = {});

}  // namespace omnilearn::scenarios
