// The multi-job simulator's summary and run folder (cluster_sim.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Link.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cluster_jobs_table.h"
#include "cluster_sim.h"
#include "finish_time_fairness.h"
#include "pollux_job_hooks.h"
#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::sim::cluster {

using traces::shortest_number;

namespace {

// summary.json's energy block (docs/energy.md, "Several jobs").
nlohmann::ordered_json energy_json(const ClusterEnergy& e) {
  nlohmann::ordered_json j;
  j["total_j"] = e.total_j;
  j["jobs_j"] = e.jobs_j;
  j["unallocated_idle_j"] = e.unallocated_idle_j;
  j["average_power_w"] = e.average_power_w;
  double compute = 0.0, comm = 0.0, wait = 0.0, idle = 0.0;
  for (const JobEnergy& job : e.jobs) {
    compute += job.compute_j;
    comm += job.comm_j;
    wait += job.wait_j;
    idle += job.idle_j;
  }
  j["compute_j"] = compute;
  j["comm_j"] = comm;
  j["wait_j"] = wait;
  j["held_idle_j"] = idle;
  j["wait"] = e.wait;
  j["comm"] = e.comm;
  for (const auto& [field, label] : e.sources) j["sources"][field] = label;
  for (const auto& [kind, k] : e.kinds) {
    j["kinds"][kind] = {{"jobs_j", k.jobs_j},
                        {"unallocated_idle_j", k.unallocated_idle_j},
                        {"unallocated_device_s", k.unallocated_device_s},
                        {"idle_w", k.idle_w}};
  }
  return j;
}

}  // namespace

ClusterSummary ClusterSim::summarise(Seconds end_s) const {
  ClusterSummary s;
  std::vector<double> jcts;
  for (const Job& job : jobs_) {
    s.jobs.push_back(job.outcome);
    if (job.outcome.finished()) {
      jcts.push_back(job.outcome.jct_s());
      s.makespan_s = std::max(s.makespan_s, job.outcome.end_s);
    }
  }
  s.finished = jcts.size();
  if (s.finished < jobs_.size()) s.makespan_s = std::max(s.makespan_s, end_s);
  std::sort(jcts.begin(), jcts.end());
  if (!jcts.empty()) {
    double sum = 0.0;
    for (double v : jcts) sum += v;
    s.mean_jct_s = sum / static_cast<double>(jcts.size());
    const auto at = [&](double q) {  // linear interpolation between order statistics (pandas' default)
      const double pos = q * static_cast<double>(jcts.size() - 1);
      const auto lo = static_cast<std::size_t>(std::floor(pos));
      const std::size_t hi = std::min(lo + 1, jcts.size() - 1);
      return jcts[lo] + (pos - static_cast<double>(lo)) * (jcts[hi] - jcts[lo]);
    };
    s.median_jct_s = at(0.5);
    s.p99_jct_s = at(0.99);
  }
  const std::vector<std::string> kinds = facts_.kinds();
  const std::vector<int> capacity = facts_.capacity_by_kind();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    double held = 0.0;
    for (const Job& job : jobs_) held += job.outcome.device_s.at(kinds[i]);
    s.utilisation[kinds[i]] = s.makespan_s > 0.0 ? held / (capacity[i] * s.makespan_s) : 0.0;
  }
  s.rounds = rounds_;
  std::vector<FairShareJob> fair(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = jobs_[j];
    fair[j].workers = job.spec->workers;
    fair[j].global_batch = job.spec->global_batch;
    fair[j].total_samples = job.total_samples;
    fair[j].gradient_bytes = job.gradient_bytes;
    fair[j].balances_batches = job.spec->batch_policy != "uniform";
    fair[j].throughput = job.throughput;
  }
  add_finish_time_fairness(s, fair, fair_share_kinds(cluster_, options_.node_bandwidth_Bps, options_.node_latency_s),
                           end_s);
  if (energy_) {
    std::map<std::string, int> by_kind;
    for (std::size_t i = 0; i < kinds.size(); ++i) by_kind[kinds[i]] = capacity[i];
    s.energy = energy_->summary(by_kind, s.makespan_s);
  }
  return s;
}

Status ClusterSim::write(const ClusterSummary& summary) {
  if (options_.output_dir.empty()) return Status::ok();
  const std::vector<std::string> kinds = facts_.kinds();
  std::vector<SimulatedJobFacts> facts;
  for (const Job& j : jobs_) facts.push_back({j.spec, j.dropped_pushes});
  nlohmann::ordered_json js;
  js["kind"] = "jobs";
  js["scheduler"] = options_.scheduler;
  js["round_s"] = options_.scheduling.round_s;
  js["jobs"] = summary.jobs.size();
  js["finished"] = summary.finished;
  js["mean_jct_s"] = summary.mean_jct_s;
  js["median_jct_s"] = summary.median_jct_s;
  js["p99_jct_s"] = summary.p99_jct_s;
  js["makespan_s"] = summary.makespan_s;
  js["utilisation"] = summary.utilisation;
  js["mean_rho"] = summary.mean_rho;
  js["max_rho"] = summary.max_rho;
  const std::vector<int> capacity = facts_.capacity_by_kind();
  for (std::size_t i = 0; i < kinds.size(); ++i) js["devices"][kinds[i]] = capacity[i];
  js["rounds"] = summary.rounds;
  if (summary.energy) js["energy"] = energy_json(*summary.energy);
  if (options_.measured_steps || options_.statistical_efficiency) js["job_model"] = job_model_json(options_);
  // Why the run ended before every job did: the error, a stop request or --max-time; absent when all ended.
  if (!status_.is_ok()) {
    js["stopped"] = status_.message();
  } else if (summary.finished < summary.jobs.size()) {
    js["stopped"] = "max-time " + shortest_number(options_.max_time_s) + " s";
  }
  js["argv"] = options_.argv;
  const run::JobsRunWriter out(options_.output_dir);
  OMNI_RETURN_IF_ERROR(out.write_jobs(simulated_jobs_table(summary, facts, kinds)));
  flush_allocations(true);  // the stream is open: run() opened it, with an output folder
  OMNI_RETURN_IF_ERROR(allocations_status_);
  OMNI_RETURN_IF_ERROR(allocations_out_->commit());
  allocations_out_.reset();
  OMNI_RETURN_IF_ERROR(write_timeline(out));
  return out.write_summary(js);
}

Status ClusterSim::open_allocations() {
  if (options_.output_dir.empty()) return Status::ok();
  auto stream = run::JobsRunWriter(options_.output_dir).open_stream("allocations.csv");
  if (!stream.is_ok()) return stream.status();
  allocations_out_.emplace(std::move(stream).value());
  return Status::ok();
}

void ClusterSim::flush_allocations(bool all) {
  if (!allocations_out_ || (!all && allocations_csv_.size() < (std::size_t{1} << 20))) return;
  if (allocations_status_.is_ok()) allocations_status_ = allocations_out_->append(allocations_csv_);
  allocations_csv_.clear();
}

Status ClusterSim::write_timeline(const run::JobsRunWriter& out) const {
  // Perfetto / chrome://tracing: one track per job (microseconds of simulated time). The events are written one by
  // one (what dumping them as one array gives, without holding them all).
  auto stream = out.open_stream("timeline.json");
  if (!stream.is_ok()) return stream.status();
  std::string timeline = "{\"traceEvents\":[";
  timeline += nlohmann::json{{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "jobs"}}}}.dump();
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    timeline += ",";
    timeline +=
        nlohmann::json{
            {"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", j}, {"args", {{"name", jobs_[j].spec->name}}}}
            .dump();
    for (const Job::Segment& seg : jobs_[j].segments) {
      timeline += ",";
      timeline += nlohmann::json{{"name", seg.what},
                                 {"ph", "X"},
                                 {"pid", 1},
                                 {"tid", j},
                                 {"ts", seg.start_s * 1e6},
                                 {"dur", (seg.end_s - seg.start_s) * 1e6}}
                      .dump();
    }
    if (timeline.size() >= (std::size_t{1} << 20)) {
      OMNI_RETURN_IF_ERROR(stream->append(timeline));
      timeline.clear();
    }
  }
  timeline += "]}\n";
  OMNI_RETURN_IF_ERROR(stream->append(timeline));
  return stream->commit();
}

}  // namespace omnilearn::sim::cluster
