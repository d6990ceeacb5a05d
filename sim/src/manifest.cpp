// manifest.json for simulator runs. Everything but the wall_clock block is a function of the scenario and the
// options, so two runs of the same scenario and seed differ only there.
#include <cstdio>
#include <string>
#include <vector>

#include <xbt/base.h>  // simgrid/version.h uses its macros without including it
#include <simgrid/version.h>

#include "omnilearn/scenarios/scenario_json.h"
#include "run_recorder.h"

namespace omnilearn::sim {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += quote(items[i]);
  }
  out += "]";
  return out;
}

}  // namespace

std::string manifest_json(const scenarios::Scenario& scenario, const SimOptions& options, const std::string& started,
                          const std::string& elapsed_s) {
  const std::string argv = json_array(options.argv);
  const std::string simgrid_args = json_array(options.simgrid_args);
  std::string out = "{\n  \"backend\": \"sim\",\n  \"scenario\": " + scenarios::scenario_to_json(scenario) +
                    ",\n  \"argv\": " + argv + ",\n  \"seed\": " + std::to_string(scenario.seed) +
                    ",\n  \"versions\": {\"simgrid\": " + quote(std::to_string(SIMGRID_VERSION_MAJOR) + "." +
                                                                std::to_string(SIMGRID_VERSION_MINOR) + "." +
                                                                std::to_string(SIMGRID_VERSION_PATCH)) +
                    "},\n  \"simgrid_args\": " + simgrid_args + ",\n  \"iteration_rows\": " +
                    (options.iteration_rows ? "true" : "false");
  for (const auto& [key, value] : options.manifest_fields) out += ",\n  " + quote(key) + ": " + quote(value);
  out += ",\n  \"wall_clock\": {\"started\": " + quote(started) + ", \"elapsed_s\": " + elapsed_s + "}\n}";
  return out;
}

}  // namespace omnilearn::sim
