#include "cli/sweep_table.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "omnilearn/base/format.h"

namespace omnilearn::cli {
namespace {

std::string json_field(const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key)) return "";
  const auto& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return format_g(v.get<double>(), 9);
  return v.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

bool is_policy_axis(const std::string& axis) { return axis == "policy.name" || axis == "policy"; }

// The coordinates of a row without its policy, so rows that differ only by policy compare.
std::string key_without_policy(const SweepTable& t, const SweepRow& r) {
  std::string key;
  for (std::size_t i = 0; i < t.axes.size(); ++i) {
    if (!is_policy_axis(t.axes[i])) key += r.coordinates[i] + "\x1f";
  }
  return key;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

const std::vector<std::string> SweepTable::kSummaryFields{
    "policy", "mode", "workers", "iterations", "epochs", "total_time_s", "mean_iteration_s", "idle_fraction",
    "mean_staleness", "max_staleness", "decisions", "batch_changes",
    // Virtual-time training (workload.numerics: real) and the testbed: empty for time-only runs.
    "final_accuracy", "time_to_target_s"};

const std::vector<std::string> SweepTable::kEnergyFields{
    "joules", "average_power_w", "compute_j", "comm_j", "wait_j", "idle_j", "energy_to_target_j",
    "joules_per_accuracy_point", "reason"};

Result<SweepTable> gather_sweep_table(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
                                      const std::vector<int>& exit_codes, const std::string& out) {
  SweepTable t;
  if (sweep.bases.size() > 1) t.axes.push_back("base");
  for (const auto& axis : sweep.axes) t.axes.push_back(axis.name);
  for (std::size_t i = 0; i < points.size(); ++i) {
    SweepRow r;
    r.point = points[i].name;
    for (const auto& [axis, label] : points[i].coordinates) r.coordinates.push_back(label);
    r.coordinates.resize(t.axes.size());
    r.fields.resize(SweepTable::kSummaryFields.size());
    r.status = exit_codes[i] == 0  ? "ok"
               : exit_codes[i] < 0 ? "missing"
                                   : "failed (exit " + std::to_string(exit_codes[i]) + ")";
    if (exit_codes[i] == 0) {
      const std::string path = out + "/" + points[i].name + "/summary.json";
      std::ifstream in(path);
      nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) return Status::parse_error(path + ": not a JSON object");
      for (std::size_t f = 0; f < SweepTable::kSummaryFields.size(); ++f) {
        r.fields[f] = json_field(j, SweepTable::kSummaryFields[f]);
      }
      if (j.contains("total_time_s") && j["total_time_s"].is_number()) r.total_time_s = j["total_time_s"].get<double>();
      if (j.contains("energy") && j["energy"].is_object()) {
        t.energy = true;
        const nlohmann::json& e = j["energy"];
        for (const std::string& f : SweepTable::kEnergyFields) r.energy.push_back(json_field(e, f));
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
  const std::string tmp = path + ".tmp";
  {
    std::ofstream os(tmp);
    if (!os) return Status::io_error("cannot write " + tmp);
    os << "point";
    for (const auto& a : t.axes) os << "," << csv_cell(a);
    os << ",status";
    for (const auto& f : SweepTable::kSummaryFields) os << "," << f;
    os << ",vs_uniform_pct,vs_oracle_pct";
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
      os << "," << (r.vs_uniform_pct ? format_g(*r.vs_uniform_pct, 9) : "");
      os << "," << (r.vs_oracle_pct ? format_g(*r.vs_oracle_pct, 9) : "");
      if (t.energy) {
        for (const auto& f : r.energy) os << "," << csv_cell(f);
        os << "," << (r.energy_vs_uniform_pct ? format_g(*r.energy_vs_uniform_pct, 9) : "");
      }
      os << "\n";
    }
    if (!os.flush()) return Status::io_error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::io_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::ok();
}

void print_sweep_table(const SweepTable& t, std::ostream& os) {
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
    auto fixed = [](const std::string& v, int digits) {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (v.empty() || end == v.c_str()) return std::string("-");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.*f", digits, d);
      return std::string(buf);
    };
    std::snprintf(line, sizeof line, "%12s %12s %11s %11s", fixed(r.fields[5], 2).c_str(),
                  fixed(r.fields[6], 4).c_str(), pct(r.vs_uniform_pct).c_str(), pct(r.vs_oracle_pct).c_str());
    os << coords << line;
    if (t.energy) {
      std::snprintf(line, sizeof line, " %12s %11s", fixed(r.energy[0], 1).c_str(), pct(r.energy_vs_uniform_pct).c_str());
      os << line;
    }
    os << "  " << r.status << "\n";
  }
}

}  // namespace omnilearn::cli
