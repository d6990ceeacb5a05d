#include "cli/sweep_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/format.h"
#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::cli {
namespace {

bool is_policy_axis(const std::string& axis) { return axis == "policy.name" || axis == "policy"; }

// The coordinates of a row without its policy, so rows that differ only by policy compare.
std::string key_without_policy(const SweepTable& t, const SweepRow& r) {
  std::string key;
  for (std::size_t i = 0; i < t.axes.size(); ++i) {
    if (!is_policy_axis(t.axes[i])) key += r.coordinates[i] + "\x1f";
  }
  return key;
}

// One cell as RFC 4180 says (the project's one quoting rule).
std::string csv_cell(const std::string& s) { return omnilearn::traces::quote_field(s); }

}  // namespace

const std::vector<std::string> SweepTable::kJobsSummaryFields{
    "round_s", "jobs", "finished", "mean_jct_s", "median_jct_s", "p99_jct_s", "makespan_s", "rounds", "stopped"};

const std::vector<std::string> SweepTable::kSummaryFields{
    "policy", "mode", "workers", "iterations", "epochs", "total_time_s", "mean_iteration_s", "idle_fraction",
    "mean_staleness", "max_staleness", "decisions", "batch_changes",
    // Virtual-time training (workload.numerics: real) and the testbed: empty for time-only runs.
    "final_accuracy", "time_to_target_s"};

namespace {

// A jobs summary as flat columns: its fields, `utilisation` spread to utilisation_<kind> and `energy`'s numbers and
// strings to energy_<field>; other objects and lists left out.
nlohmann::ordered_json flat_jobs_summary(const nlohmann::ordered_json& j) {
  nlohmann::ordered_json flat = nlohmann::ordered_json::object();
  for (const auto& [key, value] : j.items()) {
    if (key == "utilisation" && value.is_object()) {
      for (const auto& [kind, u] : value.items()) flat["utilisation_" + kind] = u;
    } else if (key == "energy" && value.is_object()) {  // `jobs run --energy`: energy_total_j, ... (not per kind)
      for (const auto& [field, v] : value.items()) {
        if (v.is_number() || v.is_string()) flat["energy_" + field] = v;
      }
    } else if (key != "kind" && (value.is_number() || value.is_string())) {
      flat[key] = value;
    }
  }
  return flat;
}

std::string json_cell(const nlohmann::ordered_json& j, const std::string& key) {
  if (!j.contains(key)) return "";
  const auto& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return format_g(v.get<double>(), 9);
  return v.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

const std::vector<std::string> SweepTable::kEnergyFields{
    "joules", "average_power_w", "compute_j",          "comm_j",
    "wait_j", "idle_j",          "energy_to_target_j", "joules_per_accuracy_point",
    "reason"};

Result<SweepTable> gather_sweep_table(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
                                      const std::vector<int>& exit_codes, const std::string& out) {
  SweepTable t;
  t.jobs = sweep.kind == scenarios::ScenarioKind::kJobs;
  if (sweep.bases.size() > 1) t.axes.push_back("base");
  for (const auto& axis : sweep.axes) t.axes.push_back(axis.name);
  std::vector<nlohmann::ordered_json> summaries(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (exit_codes[i] != 0) continue;
    const std::string path = out + "/" + points[i].name + "/summary.json";
    std::ifstream in(path);
    summaries[i] = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (summaries[i].is_discarded() || !summaries[i].is_object())
      return Status::parse_error(path + ": not a JSON object");
    if (t.jobs) summaries[i] = flat_jobs_summary(summaries[i]);
  }
  if (!t.jobs) {
    t.columns = SweepTable::kSummaryFields;
  } else {
    auto add = [&t](const std::string& c) {
      if (std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end()) return;
      if (std::find(t.axes.begin(), t.axes.end(), c) != t.axes.end()) return;
      t.columns.push_back(c);
    };
    for (const std::string& c : SweepTable::kJobsSummaryFields) add(c);
    for (const auto& j : summaries) {
      for (const auto& [key, value] : j.items()) {
        if (key.rfind("utilisation_", 0) == 0) add(key);
      }
    }
    for (const auto& j : summaries) {
      for (const auto& [key, value] : j.items()) add(key);
    }
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    SweepRow r;
    r.point = points[i].name;
    for (const auto& [axis, label] : points[i].coordinates) r.coordinates.push_back(label);
    r.coordinates.resize(t.axes.size());
    r.fields.resize(t.columns.size());
    r.status = exit_codes[i] == 0  ? "ok"
               : exit_codes[i] < 0 ? "missing"
                                   : "failed (exit " + std::to_string(exit_codes[i]) + ")";
    if (exit_codes[i] == 0) {
      const auto& j = summaries[i];
      for (std::size_t f = 0; f < t.columns.size(); ++f) r.fields[f] = json_cell(j, t.columns[f]);
      if (!t.jobs && j.contains("total_time_s") && j["total_time_s"].is_number()) {
        r.total_time_s = j["total_time_s"].get<double>();
      }
      if (!t.jobs && j.contains("energy") && j["energy"].is_object()) {  // a jobs run's energy is not a column
        t.energy = true;
        const nlohmann::ordered_json& e = j["energy"];
        for (const std::string& f : SweepTable::kEnergyFields) r.energy.push_back(json_cell(e, f));
        if (e.contains("joules") && e["joules"].is_number()) r.joules = e["joules"].get<double>();
      }
    }
    t.rows.push_back(std::move(r));
  }
  std::map<std::string, double> uniform, oracle, uniform_joules;
  for (SweepRow& r : t.rows) r.energy.resize(SweepTable::kEnergyFields.size());
  for (const SweepRow& r : t.rows) {
    if (r.joules && r.fields[0] == "uniform") uniform_joules[key_without_policy(t, r)] = *r.joules;
    if (!r.total_time_s) continue;
    if (r.fields[0] == "uniform") uniform[key_without_policy(t, r)] = *r.total_time_s;
    if (r.fields[0] == "oracle") oracle[key_without_policy(t, r)] = *r.total_time_s;
  }
  for (SweepRow& r : t.rows) {
    const std::string key = key_without_policy(t, r);
    if (r.joules && uniform_joules.contains(key) && uniform_joules[key] > 0.0) {
      r.energy_vs_uniform_pct = 100.0 * (*r.joules / uniform_joules[key] - 1.0);
    }
    if (!r.total_time_s) continue;
    if (uniform.contains(key)) r.vs_uniform_pct = 100.0 * (*r.total_time_s / uniform[key] - 1.0);
    if (oracle.contains(key)) r.vs_oracle_pct = 100.0 * (*r.total_time_s / oracle[key] - 1.0);
  }
  return t;
}

std::vector<int> exit_codes_from_folders(const std::vector<scenarios::SweepPoint>& points, const std::string& out) {
  std::vector<int> codes;
  for (const scenarios::SweepPoint& p : points) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(out + "/" + p.name + "/summary.json", ec)) {
      codes.push_back(0);
      continue;
    }
    std::ifstream in(out + "/" + p.name + ".exit");
    int code = -1;
    if (!(in >> code) || code == 0) code = -1;  // 0 without a summary: the folder was removed or never written
    codes.push_back(code);
  }
  return codes;
}

Status write_sweep_csv(const SweepTable& t, const std::string& path) {
  std::ostringstream os;
  {
    os << "point";
    for (const auto& a : t.axes) os << "," << csv_cell(a);
    os << ",status";
    for (const auto& f : t.columns) os << "," << csv_cell(f);
    if (!t.jobs) os << ",vs_uniform_pct,vs_oracle_pct";
    if (t.energy) {
      for (const auto& f : SweepTable::kEnergyFields) os << ",energy_" << f;
      os << ",energy_vs_uniform_pct";
    }
    os << "\n";
    for (const SweepRow& r : t.rows) {
      os << csv_cell(r.point);
      for (const auto& c : r.coordinates) os << "," << csv_cell(c);
      os << "," << csv_cell(r.status);
      for (const auto& f : r.fields) os << "," << csv_cell(f);
      if (t.jobs) {
        os << "\n";
        continue;
      }
      os << "," << (r.vs_uniform_pct ? format_g(*r.vs_uniform_pct, 9) : "");
      os << "," << (r.vs_oracle_pct ? format_g(*r.vs_oracle_pct, 9) : "");
      if (t.energy) {
        for (const auto& f : r.energy) os << "," << csv_cell(f);
        os << "," << (r.energy_vs_uniform_pct ? format_g(*r.energy_vs_uniform_pct, 9) : "");
      }
      os << "\n";
    }
  }
  return write_file_atomically(path, os.str());
}

namespace {

std::string fixed_cell(const std::string& v, int digits) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end == v.c_str()) return std::string("-");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, d);
  return std::string(buf);
}

std::string axis_cells(const std::vector<std::string>& cells) {
  std::string out;
  for (const auto& c : cells) out += c.substr(0, 22) + std::string(c.size() < 22 ? 23 - c.size() : 1, ' ');
  return out;
}

// A jobs sweep: mean and p99 JCT, makespan and finished jobs per point.
void print_jobs_table(const SweepTable& t, std::ostream& os) {
  auto column = [&t](const std::string& name) {
    return static_cast<std::size_t>(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
  };
  const std::size_t mean = column("mean_jct_s"), p99 = column("p99_jct_s"), makespan = column("makespan_s"),
                    finished = column("finished"), jobs = column("jobs");
  auto cell = [](const SweepRow& r, std::size_t i) { return i < r.fields.size() ? r.fields[i] : std::string(); };
  char line[256];
  std::snprintf(line, sizeof line, "%14s %14s %14s %9s  %s", "mean JCT (s)", "p99 JCT (s)", "makespan (s)", "finished",
                "status");
  os << axis_cells(t.axes) << line << "\n";
  for (const SweepRow& r : t.rows) {
    const std::string done = cell(r, finished).empty() ? "-" : cell(r, finished) + "/" + cell(r, jobs);
    std::snprintf(line, sizeof line, "%14s %14s %14s %9s  %s", fixed_cell(cell(r, mean), 1).c_str(),
                  fixed_cell(cell(r, p99), 1).c_str(), fixed_cell(cell(r, makespan), 1).c_str(), done.c_str(),
                  r.status.c_str());
    os << axis_cells(r.coordinates) << line << "\n";
  }
}

}  // namespace

void print_sweep_table(const SweepTable& t, std::ostream& os) {
  if (t.jobs) {
    print_jobs_table(t, os);
    return;
  }
  char line[256];
  std::string header;
  for (const auto& a : t.axes) header += a.substr(0, 22) + std::string(a.size() < 22 ? 23 - a.size() : 1, ' ');
  std::snprintf(line, sizeof line, "%12s %12s %11s %11s", "total (s)", "iter (s)", "vs uniform", "vs oracle");
  os << header << line;
  if (t.energy) {
    std::snprintf(line, sizeof line, " %12s %11s", "energy (J)", "vs uniform");
    os << line;
  }
  os << "  status\n";
  for (const SweepRow& r : t.rows) {
    std::string coords;
    for (const auto& c : r.coordinates) coords += c.substr(0, 22) + std::string(c.size() < 22 ? 23 - c.size() : 1, ' ');
    auto pct = [](const std::optional<double>& v) {
      return v ? (v > 0 ? "+" : "") + format_g(std::round(*v * 10) / 10, 9) + "%" : std::string("-");
    };
    const auto fixed = fixed_cell;
    std::snprintf(line, sizeof line, "%12s %12s %11s %11s", fixed(r.fields[5], 2).c_str(),
                  fixed(r.fields[6], 4).c_str(), pct(r.vs_uniform_pct).c_str(), pct(r.vs_oracle_pct).c_str());
    os << coords << line;
    if (t.energy) {
      std::snprintf(line, sizeof line, " %12s %11s", fixed(r.energy[0], 1).c_str(),
                    pct(r.energy_vs_uniform_pct).c_str());
      os << line;
    }
    os << "  " << r.status << "\n";
  }
}

}  // namespace omnilearn::cli
