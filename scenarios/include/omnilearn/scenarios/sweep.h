// Sweep: a set of scenario runs described by one file: base scenario(s) and axes whose cartesian product is
// run. Expansion is deterministic (first axis slowest) and gives each point a stable, filesystem-safe name.
// Plain values and pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario_kind.h"

namespace omnilearn::scenarios {

// One value of an axis: a label (used in point names) and the overrides it applies.
struct SweepValue {
  std::string label;
  std::vector<std::string> overrides;  // `path.to.key=value`, as load_scenario takes them
};

struct SweepAxis {
  std::string name;               // the key path (plain axis) or the axis's label (named-preset axis)
  std::vector<SweepValue> values;
};

// A base scenario file with its label ("" when the sweep has a single `base`).
struct SweepBase {
  std::string label;
  std::string path;  // resolved against the sweep file's folder
};

struct Sweep {
  std::string name;                    // from `name:` or the file's stem
  std::string source_path;
  ScenarioKind kind = ScenarioKind::kTraining;  // every base's: a sweep does not mix kinds
  std::vector<SweepBase> bases;        // the slowest axis when there are several
  std::vector<SweepAxis> axes;         // in file order
  std::vector<std::string> overrides;  // `set:`: applied to every point before the axes' overrides
};

struct SweepPoint {
  std::size_t index = 0;               // position in expansion order
  ScenarioKind kind = ScenarioKind::kTraining;  // run by `omnilearn sim` (training) or `omnilearn jobs run`
  std::string name;                    // "<sweep>-<label>-<label>...": unique within the sweep, filesystem-safe
  std::string base_path;               // the scenario file to load
  std::vector<std::string> overrides;  // pass to load_scenario (load_jobs_scenario) with base_path
  // (axis name, value label) per axis; ("base", label) first when the sweep has several bases.
  std::vector<std::pair<std::string, std::string>> coordinates;
};

// Reads a sweep file (format in scenarios/README section "Sweeps"): an error names the sweep file, line and
// field. The points' scenarios are not loaded here, so that one invalid point cannot stop the others.
Result<Sweep> load_sweep(const std::string& path);

// Loads the scenario of `point` to check it: the error names the sweep file, the point and the scenario error.
Status check_point(const Sweep& sweep, const SweepPoint& point);

// Every point of the cartesian product of bases x axes, first axis slowest.
std::vector<SweepPoint> expand(const Sweep& sweep);

}  // namespace omnilearn::scenarios
