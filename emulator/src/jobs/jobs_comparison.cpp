#include "omnilearn/emulator/jobs_comparison.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/csv_table.h"

namespace omnilearn::emulator {
namespace {

using traces::CsvTable;

double relative_error(double sim, double testbed) { return testbed != 0.0 ? (testbed - sim) / testbed : 0.0; }

// jobs.csv's rows: each job's JCT and mean step time (device-seconds / workers / steps), in file order.
Result<std::vector<RunJobTimes>> read_job_rows(const std::string& path) {
  auto jobs = CsvTable::open(path);
  if (!jobs) return jobs.status();
  auto c = jobs->columns({"job", "jct_s", "steps", "workers"});
  if (!c) return c.status();
  std::vector<std::size_t> device_cols;
  for (std::size_t i = 0; i < jobs->header().size(); ++i) {
    if (jobs->header()[i].starts_with("device_s_")) device_cols.push_back(i);
  }
  std::vector<RunJobTimes> out;
  while (jobs->next()) {
    RunJobTimes t;
    t.name = jobs->text((*c)[0]);
    auto jct = jobs->optional_number((*c)[1]);
    auto steps = jobs->number((*c)[2]);
    auto workers = jobs->number((*c)[3]);
    for (const Status& st : {jct.status(), steps.status(), workers.status()}) OMNI_RETURN_IF_ERROR(st);
    t.jct_s = *jct;
    double held = 0.0;
    for (const std::size_t d : device_cols) {
      auto v = jobs->number(d);
      if (!v) return v.status();
      held += *v;
    }
    t.mean_step_s = *steps > 0.0 && *workers > 0.0 ? held / *workers / *steps : 0.0;
    out.push_back(std::move(t));
  }
  OMNI_RETURN_IF_ERROR(jobs->status());
  return out;
}

}  // namespace

Result<std::vector<RunJobTimes>> read_run_job_times(const std::string& run_dir) {
  auto out = read_job_rows((std::filesystem::path(run_dir) / "jobs.csv").string());
  if (!out) return out.status();
  auto alloc = CsvTable::open((std::filesystem::path(run_dir) / "allocations.csv").string());
  if (!alloc) return alloc.status();
  auto c = alloc->columns({"time_s", "job", "kind", "devices"});
  if (!c) return c.status();
  // Per round time (in file order) and job: what it held.
  std::vector<std::string> times;
  std::map<std::string, std::map<std::string, std::string>> held;  // time -> job -> "n kind + ..."
  while (alloc->next()) {
    const std::string& time = alloc->text((*c)[0]);
    if (times.empty() || times.back() != time) times.push_back(time);
    std::string& h = held[time][alloc->text((*c)[1])];
    h += (h.empty() ? "" : " + ") + alloc->text((*c)[3]) + " " + alloc->text((*c)[2]);
  }
  OMNI_RETURN_IF_ERROR(alloc->status());
  for (RunJobTimes& t : *out) {
    for (const std::string& time : times) {
      const auto& at = held[time];
      const auto it = at.find(t.name);
      if (it == at.end() && t.allocations.empty()) continue;  // not yet run
      const std::string now = it == at.end() ? "-" : it->second;
      if (t.allocations.empty() || t.allocations.back() != now) t.allocations.push_back(now);
    }
    while (!t.allocations.empty() && t.allocations.back() == "-") t.allocations.pop_back();  // after its end
  }
  return out;
}

Result<JobsComparison> compare_job_runs(const std::vector<RunJobTimes>& sim, const std::vector<RunJobTimes>& testbed,
                                        double tolerance) {
  JobsComparison c;
  c.tolerance = tolerance;
  c.same_allocations = true;
  c.pass = !testbed.empty();
  if (sim.size() != testbed.size()) {
    return Status::invalid_argument("the simulator ran " + std::to_string(sim.size()) + " jobs, the testbed " +
                                    std::to_string(testbed.size()));
  }
  for (const RunJobTimes& t : testbed) {
    const RunJobTimes* s = nullptr;
    for (const RunJobTimes& x : sim) {
      if (x.name == t.name) s = &x;
    }
    if (s == nullptr) return Status::invalid_argument("job '" + t.name + "' is not in the simulator's run");
    JobComparison j;
    j.name = t.name;
    j.sim_jct_s = s->jct_s;
    j.testbed_jct_s = t.jct_s;
    if (s->jct_s && t.jct_s) j.jct_error = relative_error(*s->jct_s, *t.jct_s);
    j.sim_step_s = s->mean_step_s;
    j.testbed_step_s = t.mean_step_s;
    j.step_error = relative_error(s->mean_step_s, t.mean_step_s);
    j.same_allocations = s->allocations == t.allocations;
    j.pass = s->jct_s && t.jct_s && std::abs(j.jct_error) <= tolerance && std::abs(j.step_error) <= tolerance;
    c.same_allocations = c.same_allocations && j.same_allocations;
    c.pass = c.pass && j.pass;
    c.jobs.push_back(std::move(j));
  }
  return c;
}

namespace {
std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
std::string maybe(const std::optional<Seconds>& v) { return v ? fixed(*v, 2) : std::string(); }
}  // namespace

std::string comparison_csv(const JobsComparison& c) {
  std::string csv =
      "job,sim_jct_s,testbed_jct_s,jct_error_pct,sim_step_s,testbed_step_s,step_error_pct,same_allocations,pass\n";
  for (const JobComparison& j : c.jobs) {
    csv += traces::quote_field(j.name) + "," + maybe(j.sim_jct_s) + "," + maybe(j.testbed_jct_s) + "," +
           fixed(100.0 * j.jct_error, 2) + "," + fixed(j.sim_step_s, 5) + "," + fixed(j.testbed_step_s, 5) + "," +
           fixed(100.0 * j.step_error, 2) + "," + (j.same_allocations ? "yes" : "no") + "," + (j.pass ? "yes" : "no") +
           "\n";
  }
  return csv;
}

std::string comparison_table(const JobsComparison& c) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %10s %10s %8s %10s %10s %8s %6s %5s\n", "job", "sim JCT s", "tb JCT s",
                "err %", "sim step", "tb step", "err %", "alloc", "pass");
  out += line;
  for (const JobComparison& j : c.jobs) {
    std::snprintf(line, sizeof line, "%-12s %10s %10s %8.2f %10.5f %10.5f %8.2f %6s %5s\n", j.name.c_str(),
                  maybe(j.sim_jct_s).c_str(), maybe(j.testbed_jct_s).c_str(), 100.0 * j.jct_error, j.sim_step_s,
                  j.testbed_step_s, 100.0 * j.step_error, j.same_allocations ? "same" : "diff", j.pass ? "yes" : "no");
    out += line;
  }
  out += std::string(c.pass ? "pass" : "FAIL") + ": every job's JCT and mean step time within " +
         fixed(100.0 * c.tolerance, 0) + "% of the testbed's" + (c.pass ? "" : " (not all)") + "; allocations " +
         (c.same_allocations ? "the same" : "differ") + "\n";
  return out;
}

}  // namespace omnilearn::emulator
