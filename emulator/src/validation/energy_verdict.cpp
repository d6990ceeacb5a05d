#include "omnilearn/emulator/energy_verdict.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/format.h"
#include "omnilearn/emulator/validation.h"
#include "omnilearn/traces/csv_table.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

Result<nlohmann::json> json_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return Status::not_found("cannot read " + file.string());
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::parse_error(file.string() + ": expected a JSON object");
  return j;
}

// A number at `key` of `j` (of `file`), or an error naming both.
Result<double> number_at(const nlohmann::json& j, const char* key, const fs::path& file) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) {
    return Status::parse_error(file.string() + ": " + key + ": expected a number");
  }
  return j[key].get<double>();
}

// The testbed's CPU shares and its nodes' cores (manifest.json), in worker order.
Status read_cores(const fs::path& testbed, std::vector<double>& shares, std::vector<double>& cores) {
  const fs::path file = testbed / "manifest.json";
  auto m = json_file(file);
  if (!m) return m.status();
  const nlohmann::json& s = (*m)["cpu_shares"];
  const nlohmann::json* workers = nullptr;
  if (m->contains("scenario") && (*m)["scenario"].is_object() && (*m)["scenario"].contains("cluster") &&
      (*m)["scenario"]["cluster"].is_object() && (*m)["scenario"]["cluster"].contains("workers")) {
    workers = &(*m)["scenario"]["cluster"]["workers"];
  }
  if (!s.is_array() || workers == nullptr || !workers->is_array() || s.size() != workers->size() || s.empty()) {
    return Status::parse_error(file.string() + ": expected cpu_shares and scenario.cluster.workers, one per worker");
  }
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (!s[k].is_number()) return Status::parse_error(file.string() + ": cpu_shares: expected numbers");
    auto c = number_at((*workers)[k], "cores", file);
    if (!c) return c.status();
    shares.push_back(s[k].get<double>());
    cores.push_back(*c);
  }
  return Status::ok();
}

// The simulator's busy host core-seconds: over iterations.csv's rows, (compute_s + comm_s) x the worker's share.
Result<double> busy_core_s(const fs::path& sim, const std::vector<double>& shares) {
  auto table = traces::CsvTable::open((sim / "iterations.csv").string());
  if (!table) return table.status();
  auto cols = table->columns({"worker", "compute_s", "comm_s"});
  if (!cols) return cols.status();
  double busy = 0.0;
  while (table->next()) {
    auto worker = table->integer((*cols)[0]);
    if (!worker) return worker.status();
    if (*worker < 0 || static_cast<std::size_t>(*worker) >= shares.size()) {
      return table->error("worker " + std::to_string(*worker) + " is not one of the testbed's " +
                          std::to_string(shares.size()));
    }
    auto compute = table->number((*cols)[1]);
    if (!compute) return compute.status();
    auto comm = table->number((*cols)[2]);
    if (!comm) return comm.status();
    busy += (*compute + *comm) * shares[static_cast<std::size_t>(*worker)];
  }
  OMNI_RETURN_IF_ERROR(table->status());
  return busy;
}

EnergyVerdict refused(std::string why) {
  EnergyVerdict v;
  v.refusal = std::move(why);
  return v;
}

}  // namespace

Result<EnergyVerdict> judge_host_energy(const fs::path& calibration, const fs::path& testbed, const fs::path& sim,
                                        const std::string& host_id) {
  const fs::path summary_file = testbed / "summary.json";
  auto summary = json_file(summary_file);
  if (!summary) return summary.status();
  const nlohmann::json energy = summary->value("energy", nlohmann::json::object());
  const std::string source = energy.is_object() ? energy.value("source", std::string()) : std::string();
  if (source != "measured") {
    return refused("the testbed's joules are " + (source.empty() ? std::string("not reported") : source) +
                   ", not measured: there is no measurement to judge against (a host with readable RAPL counters "
                   "measures)");
  }
  const fs::path power_file = calibrated_profile_path(calibration).parent_path() / kHostPowerFile;
  std::error_code ec;
  if (!fs::exists(power_file, ec)) {
    return refused("the energy figures were not calibrated on this host: " + power_file.string() +
                   " is absent (omnilearn validate measures it when it calibrates on a host with RAPL)");
  }
  auto host = read_host_power(power_file);
  if (!host) return host.status();
  if (host->host_id != host_id) {
    return refused("the energy figures were calibrated on another host (" + host->host_id + ", " + power_file.string() +
                   "); this is " + host_id);
  }
  const std::string note = energy.value("note", std::string());
  if (note.rfind(host->counter + ":", 0) != 0) {
    return refused("the testbed measured through another counter than the calibration's (" + host->counter +
                   "): " + note.substr(0, note.find(':')));
  }
  std::vector<double> shares, cores;
  OMNI_RETURN_IF_ERROR(read_cores(testbed, shares, cores));
  for (std::size_t k = 0; k < shares.size(); ++k) {
    if (std::abs(shares[k] - cores[k]) > 1e-6 * cores[k]) {
      return refused("the run is scaled: worker " + std::to_string(k) + "'s node has " + format_g(cores[k]) +
                     " cores and ran on " + format_g(shares[k]) +
                     " host cores (emulator.cpu_budget or cpu_per_core), so the simulator's times and joules describe "
                     "other machines than this host; an unscaled scenario gives each node its host share");
    }
  }
  EnergyVerdict v;
  auto measured = number_at(energy, "joules", summary_file);
  if (!measured) return measured.status();
  auto sim_summary = json_file(sim / "summary.json");
  if (!sim_summary) return sim_summary.status();
  auto sim_time = number_at(*sim_summary, "total_time_s", sim / "summary.json");
  if (!sim_time) return sim_time.status();
  auto busy = busy_core_s(sim, shares);
  if (!busy) return busy.status();
  if (!(*measured > 0.0)) return Status::parse_error(summary_file.string() + ": energy.joules: expected > 0");
  v.measured_j = *measured;
  v.sim_time_s = *sim_time;
  v.busy_core_s = *busy;
  v.predicted_j = predicted_host_joules(*host, v.sim_time_s, v.busy_core_s);
  v.error_pct = 100.0 * (v.predicted_j - v.measured_j) / v.measured_j;
  v.within = std::abs(v.error_pct) <= kEnergyTolerancePct;
  v.host = std::move(host).value();
  return v;
}

std::string format_energy_verdict(const EnergyVerdict& v) {
  if (!v.judged()) return "energy: no verdict: " + v.refusal;
  return "energy verdict: testbed " + format_g(v.measured_j, 5) + " J measured (" + v.host->counter + "), simulator " +
         format_g(v.predicted_j, 5) + " J in this host's units (" + format_g(v.host->idle_w, 4) + " W idle over " +
         format_g(v.sim_time_s, 4) + " s, " + format_g(v.host->busy_w, 4) + " W with " + std::to_string(v.host->cores) +
         " cores busy), error " + (v.error_pct >= 0 ? "+" : "") + format_g(v.error_pct, 3) +
         "%: " + (v.within ? "within " : "NOT within ") + format_g(kEnergyTolerancePct) + "%";
}

Status write_energy_verdict(const EnergyVerdict& v, const fs::path& file) {
  nlohmann::ordered_json j = {{"judged", v.judged()}, {"refusal", v.refusal}};
  if (v.judged()) {
    j["within"] = v.within ? "yes" : "no";
    j["tolerance_pct"] = kEnergyTolerancePct;
    j["measured_j"] = v.measured_j;
    j["predicted_j"] = v.predicted_j;
    j["error_pct"] = v.error_pct;
    j["sim_time_s"] = v.sim_time_s;
    j["busy_core_s"] = v.busy_core_s;
    j["host"] = {{"host_id", v.host->host_id},
                 {"counter", v.host->counter},
                 {"cores", v.host->cores},
                 {"idle_w", v.host->idle_w},
                 {"busy_w", v.host->busy_w}};
  }
  return write_file_atomically(file.string(), j.dump(2) + "\n");
}

}  // namespace omnilearn::emulator
