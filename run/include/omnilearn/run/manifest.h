// Manifest: manifest.json of a run, for both back ends, through nlohmann-json. It holds the back end's name, the
// resolved scenario, the command line, the seed, the back end's own fields (versions, settings, run id, ...) in the
// order they were set, and a wall-clock block: the start time and, once the run is over, the elapsed seconds. Two
// runs of the same scenario and seed differ only in that block. Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::run {

class Manifest {
 public:
  // Takes the start time (UTC) now.
  Manifest(std::string backend, const scenarios::Scenario& scenario, const std::vector<std::string>& argv);

  // A back end's field, after those set before (a later set of the same key replaces its value in place).
  void set(const std::string& key, nlohmann::ordered_json value);
  // String fields given by the caller (git SHA, version, ...).
  void set_all(const std::map<std::string, std::string>& fields);

  // The JSON text; `elapsed_s` null until the run is over. Text that is not UTF-8 (an argument, a path) becomes
  // U+FFFD instead of failing the run.
  std::string text(std::optional<double> elapsed_s = std::nullopt) const;

 private:
  nlohmann::ordered_json json_;  // every field but the scenario's value (null, to hold its place)
  // scenario_to_json's text, kept as text: as a JSON tree a million workers' scenario takes some 360 bytes each.
  std::string scenario_;
  std::string started_;
};

}  // namespace omnilearn::run
