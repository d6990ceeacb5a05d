#include "omnilearn/run/jobs_run_folder.h"

#include <filesystem>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::run {
namespace {

using traces::quote_field;
using traces::shortest_number;

std::string cell(const std::optional<double>& v) { return v ? shortest_number(*v) : std::string(); }

std::string jobs_csv_header(const JobsTable& t) {
  std::string h = "job,arrival_s,start_s,end_s,jct_s,queueing_s,steps,samples,restarts,batch_policy,workers";
  for (const std::string& k : t.kinds) h += ",device_s_" + quote_field(k);
  h += ",contention,fair_s,rho";
  if (t.asp_rules) h += ",asp_rule,dropped_pushes";
  if (t.energy) h += ",energy_j,compute_j,comm_j,wait_j,idle_j";
  return h + "\n";
}

std::string jobs_csv_row(const JobsTable& t, const JobRow& r) {
  const bool ran = r.start_s >= 0.0;
  const bool finished = r.end_s >= 0.0;
  const auto known = [](bool k, double v) { return k ? shortest_number(v) : std::string(); };
  std::string line = quote_field(r.name) + "," + shortest_number(r.arrival_s) + "," + known(ran, r.start_s) + "," +
                     known(finished, r.end_s) + "," + known(finished, r.end_s - r.arrival_s) + "," +
                     known(ran, r.start_s - r.arrival_s) + "," + std::to_string(r.steps) + "," +
                     shortest_number(r.samples) + "," + std::to_string(r.restarts) + "," +
                     quote_field(r.batch_policy) + "," + std::to_string(r.workers);
  for (const std::string& k : t.kinds) {
    const auto it = r.device_s.find(k);
    line += "," + shortest_number(it == r.device_s.end() ? 0.0 : it->second);
  }
  line += "," + cell(r.contention) + "," + cell(r.fair_s) + "," + cell(r.rho);
  if (t.asp_rules) line += "," + quote_field(r.asp_rule) + "," + std::to_string(r.dropped_pushes);
  if (t.energy) {
    const JobJoules e = r.energy.value_or(JobJoules{});
    for (const double v : {e.total_j, e.compute_j, e.comm_j, e.wait_j, e.idle_j}) line += "," + shortest_number(v);
  }
  return line + "\n";
}

}  // namespace

std::string jobs_csv(const JobsTable& table) {
  std::string csv = jobs_csv_header(table);
  for (const JobRow& r : table.rows) csv += jobs_csv_row(table, r);
  return csv;
}

std::string allocations_csv_header(bool packing) {
  return packing ? "time_s,job,kind,devices,packed_with\n" : "time_s,job,kind,devices\n";
}

std::string allocations_csv_row(Seconds time_s, std::string_view job, std::string_view kind, int devices,
                                const std::optional<std::string>& packed_with) {
  return shortest_number(time_s) + "," + quote_field(job) + "," + quote_field(kind) + "," + std::to_string(devices) +
         (packed_with ? "," + quote_field(*packed_with) : std::string()) + "\n";
}

std::string JobsRunWriter::path(std::string_view file) const {
  return (std::filesystem::path(dir_) / file).string();
}

Status JobsRunWriter::write_manifest(const nlohmann::ordered_json& scenario, const nlohmann::ordered_json& extra,
                                     const std::string& version) const {
  nlohmann::ordered_json manifest;
  manifest["scenario"] = scenario;
  for (const auto& [key, value] : extra.items()) manifest[key] = value;
  manifest["omnilearn_version"] = version;
  return write_file_atomically(path("manifest.json"), manifest.dump(2) + "\n");
}

Status JobsRunWriter::write_workload(const std::vector<traces::JobSpec>& jobs, const std::string& note) const {
  return traces::write_job_file(jobs, path("workload.csv"), note);
}

Status JobsRunWriter::write_jobs(const JobsTable& table) const {
  return write_file_atomically(path("jobs.csv"), jobs_csv(table));
}

Status JobsRunWriter::write_allocations(std::string_view csv) const {
  return write_file_atomically(path("allocations.csv"), csv);
}

Result<AtomicFileStream> JobsRunWriter::open_stream(std::string_view file) const {
  return AtomicFileStream::open(path(file));
}

Status JobsRunWriter::write_summary(const nlohmann::ordered_json& summary) const {
  return write_file_atomically(path("summary.json"), summary.dump(2) + "\n");
}

Result<std::unique_ptr<RunFolder>> start_jobs_run_folder(const JobsRunSetup& setup, bool replace,
                                                         const nlohmann::ordered_json& manifest_extra,
                                                         const std::string& version) {
  RunFolderOptions options;
  options.reuse = replace ? FolderReuse::kReplace : FolderReuse::kRefuse;
  auto folder = RunFolder::claim(setup.out_dir, options);
  if (!folder) return folder.status();
  const JobsRunWriter out(setup.out_dir);
  OMNI_RETURN_IF_ERROR(out.write_manifest(scenarios::jobs_scenario_json(setup.scenario), manifest_extra, version));
  if (!setup.workload_note.empty()) OMNI_RETURN_IF_ERROR(out.write_workload(setup.jobs, setup.workload_note));
  return folder;
}

}  // namespace omnilearn::run
