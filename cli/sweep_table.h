// SweepTable: one row per sweep point (its axis values and its summary.json fields), with each point's change in
// total time against `uniform` and its gap to `oracle` at the same other coordinates. Plain values.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/sweep.h"

namespace omnilearn::cli {

struct SweepRow {
  std::string point;
  std::vector<std::string> coordinates;  // one label per axis column
  std::string status;                    // "ok" or "failed (exit N)"
  std::vector<std::string> fields;       // summary values, one per SweepTable::columns entry ("" if absent)
  std::optional<double> total_time_s;
  std::optional<double> vs_uniform_pct;  // (total / uniform's total - 1) * 100
  std::optional<double> vs_oracle_pct;   // (total / oracle's total - 1) * 100
  std::vector<std::string> energy;       // summary.json's energy block, one per SweepTable::kEnergyFields entry
  std::optional<double> joules;
  std::optional<double> energy_vs_uniform_pct;  // (joules / uniform's joules - 1) * 100
};

struct SweepTable {
  static const std::vector<std::string> kSummaryFields;      // a training sweep's columns
  static const std::vector<std::string> kJobsSummaryFields;  // a jobs sweep's first columns
  bool jobs = false;  // a sweep of `omnilearn jobs run` points: no comparison with uniform or oracle
  // The summary fields, in column order: kSummaryFields; for jobs kJobsSummaryFields, then utilisation_<kind>, then
  // every other number or string the summaries hold (a field named like an axis is left out: the axis says it).
  std::vector<std::string> columns;
  static const std::vector<std::string> kEnergyFields;  // columns energy_<field>, only when `energy` is true
  bool energy = false;  // some point's summary.json has an energy block
  std::vector<std::string> axes;
  std::vector<SweepRow> rows;
};

// Reads <out>/<point>/summary.json for every point that exited 0. A negative exit code (a point with no outcome)
// gives the status "missing".
Result<SweepTable> gather_sweep_table(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
                                      const std::vector<int>& exit_codes, const std::string& out);
// The outcome of each point from existing folders (`omnilearn sweep --gather`): 0 when <out>/<point>/summary.json
// exists, else the status recorded in <out>/<point>.exit (written by the SLURM script), else -1.
std::vector<int> exit_codes_from_folders(const std::vector<scenarios::SweepPoint>& points, const std::string& out);
// Writes the table as CSV (write to a temporary file, then rename).
Status write_sweep_csv(const SweepTable& table, const std::string& path);
void print_sweep_table(const SweepTable& table, std::ostream& os);

}  // namespace omnilearn::cli
