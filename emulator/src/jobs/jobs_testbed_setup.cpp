#include "omnilearn/emulator/jobs_testbed_setup.h"

#include <algorithm>

namespace omnilearn::emulator {

Result<TestbedJobsSetup> testbed_jobs_setup(run::JobsRunSetup setup, const TestbedSettings& settings, int host_cpus) {
  const scenarios::JobsScenario& s = setup.scenario;
  if (s.checkpoint_s != 0.0 || s.restore_s != 0.0 || s.restore_at_first_start || s.packing) {
    return Status::invalid_argument(s.source_path +
                                    ": checkpoint, restore, restore_at_first_start and packing are the simulator's; "
                                    "on the testbed a job's restart is its real workers' (kept off the clock)");
  }
  if (s.step_model == "measured" || s.statistical_efficiency) {
    return Status::invalid_argument(s.source_path +
                                    ": step_model measured and statistical_efficiency are the simulator's job model "
                                    "(Pollux's tables); the testbed's jobs train real steps on real samples");
  }
  OMNI_RETURN_IF_ERROR(scenarios::check_device_kinds(setup.cluster, *setup.speeds));
  TestbedJobsSetup t;
  for (const traces::DeviceKind& k : setup.speeds->kinds())
    t.kind_cores[k.name] = k.peak_fp32_tflops * settings.cores_per_tflops;
  for (const scenarios::DeviceGroup& g : setup.cluster.groups) {
    t.cluster_cores += static_cast<double>(g.nodes * g.gpus_per_node) * t.kind_cores.at(g.device);
  }
  if (t.cluster_cores > static_cast<double>(host_cpus)) {
    return Status::invalid_argument(s.cluster + ": its devices need " + std::to_string(t.cluster_cores) +
                                    " host cores; this host has " + std::to_string(host_cpus) +
                                    " (lower --cores-per-tflops)");
  }
  t.run = std::move(setup);
  return t;
}

Result<TestbedJobsPlan> testbed_jobs_plan(const TestbedJobsSetup& setup) {
  const scenarios::JobsScenario& s = setup.run.scenario;
  TestbedJobsPlan p;
  for (const traces::JobSpec& j : setup.run.jobs) {
    TestbedJob t;
    t.name = j.name;
    t.arrival_s = j.arrival_s;
    t.workers = static_cast<int>(j.workers);
    t.min_workers = static_cast<int>(j.min_workers);
    t.max_workers = static_cast<int>(j.max_workers);
    if (!(j.epochs > 0.0)) {
      return Status::invalid_argument("job '" + j.name +
                                      "': a target alone (no epochs); the testbed's jobs train for a number of "
                                      "epochs: give epochs");
    }
    t.total_samples = j.epochs * static_cast<double>(j.dataset_samples);
    t.balances_batches = j.batch_policy != "uniform";
    const std::int64_t per_worker = std::max<std::int64_t>(1, j.global_batch / j.workers);
    for (const auto& [kind, cores] : setup.kind_cores) {
      auto est = setup.run.speeds->speed(j.model, kind, per_worker);
      if (!est) return est.status().with_context("job '" + j.name + "'");
      t.throughput[kind] = est->samples_per_s;
    }
    p.jobs.push_back(std::move(t));
    p.segment_jobs.push_back({j.name, j.model, j.global_batch, j.batch_policy, s.seed});
  }
  for (const scenarios::DeviceGroup& g : setup.run.cluster.groups) {
    for (std::int64_t n = 0; n < g.nodes; ++n) {
      p.cluster.hosts.push_back(
          {g.device + "-" + std::to_string(p.cluster.hosts.size()), g.device, static_cast<int>(g.gpus_per_node)});
    }
  }
  p.options.scheduler = s.scheduler;
  p.options.scheduling.round_s = s.round_s;
  p.options.scheduling.placement =
      s.placement == "spread" ? scheduler::Placement::kSpread : scheduler::Placement::kPack;
  if (!s.las_thresholds.empty()) p.options.scheduling.las_thresholds = s.las_thresholds;
  p.options.max_time_s = s.max_time_s;
  return p;
}

run::JobsTable testbed_jobs_table(const JobsTestbedSummary& summary, const std::vector<traces::JobSpec>& jobs,
                                  const std::vector<std::string>& kinds) {
  run::JobsTable t;
  t.kinds = kinds;
  for (std::size_t j = 0; j < summary.jobs.size(); ++j) {
    const TestbedJobOutcome& o = summary.jobs[j];
    run::JobRow r = run::job_row(o);
    r.batch_policy = j < jobs.size() ? jobs[j].batch_policy : std::string();
    r.workers = o.workers;
    t.rows.push_back(std::move(r));
  }
  return t;
}

nlohmann::ordered_json testbed_summary_json(const JobsTestbedSummary& summary, const scenarios::JobsScenario& s) {
  nlohmann::ordered_json js;
  js["kind"] = "jobs-testbed";
  js["scheduler"] = s.scheduler;
  js["round_s"] = s.round_s;
  js["jobs"] = summary.jobs.size();
  js["finished"] = summary.finished;
  js["makespan_s"] = summary.makespan_s;
  js["rounds"] = summary.rounds;
  if (!summary.stopped.empty()) js["stopped"] = summary.stopped;
  return js;
}

}  // namespace omnilearn::emulator
