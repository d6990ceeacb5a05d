#include "omnilearn/emulator/jobs_testbed.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/scheduler/scheduler_registry.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::emulator {

using traces::shortest_number;

Seconds TestbedJobOutcome::mean_step_s() const {
  if (steps <= 0 || workers <= 0) return 0.0;
  double held = 0.0;
  for (const auto& [kind, s] : device_s) held += s;
  return held / static_cast<double>(workers) / static_cast<double>(steps);
}

Status check_jobs_testbed(const std::vector<TestbedJob>& jobs, const JobsTestbedOptions& options) {
  OMNI_RETURN_IF_ERROR(scheduler::validate_scheduler_options(options.scheduling));
  if (!scheduler::make_default_scheduler_registry().contains(options.scheduler)) {
    return scheduler::make_default_scheduler_registry().make(options.scheduler, options.scheduling).status();
  }
  if (options.scheduling.checkpoint_s != 0.0 || options.scheduling.restore_s != 0.0) {
    return Status::invalid_argument(
        "checkpoint and restore: the testbed stops and restarts real workers (their "
        "start-up is kept off the emulated clock); give 0 for both");
  }
  if (options.scheduling.packing) return Status::invalid_argument("packing: the testbed does not pack jobs");
  std::set<std::string> names;
  for (const TestbedJob& j : jobs) {
    const std::string where = "job '" + j.name + "'";
    if (!names.insert(j.name).second) return Status::invalid_argument(where + ": the name is taken");
    if (!(j.total_samples > 0.0)) return Status::invalid_argument(where + ": no samples to train");
    if (j.min_workers < 1 || j.max_workers < j.min_workers) {
      return Status::invalid_argument(where + ": workers must satisfy 1 <= min_workers <= max_workers");
    }
  }
  return Status::ok();
}

namespace {

struct JobState {
  bool arrived = false;
  std::vector<scheduler::DeviceSlot> slots;  // held now
  Seconds held_since_s = 0.0;
  Seconds waiting_since_s = 0.0;
};

}  // namespace

Result<JobsTestbedSummary> run_jobs_testbed(const std::vector<TestbedJob>& jobs, const scheduler::ClusterFacts& cluster,
                                            const JobsTestbedOptions& options, SegmentRunner& runner) {
  OMNI_RETURN_IF_ERROR(check_jobs_testbed(jobs, options));
  auto made = scheduler::make_default_scheduler_registry().make(options.scheduler, options.scheduling);
  if (!made) return made.status();
  scheduler::SchedulingPolicy& policy = **made;
  const Seconds round_s = options.scheduling.round_s;
  JobsTestbedSummary summary;
  summary.allocations_csv = run::allocations_csv_header(/*packing=*/false);
  std::vector<JobState> state(jobs.size());
  for (const TestbedJob& j : jobs) {
    TestbedJobOutcome o;
    o.name = j.name;
    o.arrival_s = j.arrival_s;
    o.workers = j.workers;
    for (const std::string& k : cluster.kinds()) o.device_s[k] = 0.0;
    summary.jobs.push_back(std::move(o));
  }
  // Device time up to `until_s` (the job's end when it ended earlier).
  const auto release = [&](std::size_t j, Seconds until_s) {
    for (const scheduler::DeviceSlot& s : state[j].slots) {
      summary.jobs[j].device_s[cluster.hosts[s.host].kind] += until_s - state[j].held_since_s;
    }
    state[j].held_since_s = until_s;
  };
  Seconds now_s = 0.0;
  while (true) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {  // what the last round did
      TestbedJobOutcome& o = summary.jobs[j];
      if (o.finished()) continue;
      const JobProgress p = runner.progress(j);
      o.samples = p.samples;
      o.steps = p.steps;
      if (p.end_s) {
        release(j, *p.end_s);
        o.end_s = *p.end_s;
        state[j].slots.clear();
        ++summary.finished;
      }
    }
    if (summary.finished == jobs.size()) break;
    if (options.max_time_s > 0.0 && now_s >= options.max_time_s) {
      summary.stopped = "max-time " + shortest_number(options.max_time_s) + " s";
      break;
    }
    if (options.stop_requested && options.stop_requested()) {
      return Status::internal("stopped on request at " + shortest_number(now_s) + " s (emulated)");
    }
    scheduler::RoundFacts facts;
    facts.now_s = now_s;
    facts.cluster = cluster;
    std::vector<std::size_t> present;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const TestbedJob& job = jobs[j];
      JobState& st = state[j];
      if (!st.arrived && job.arrival_s <= now_s) {
        st.arrived = true;
        st.waiting_since_s = job.arrival_s;
      }
      if (!st.arrived || summary.jobs[j].finished()) continue;
      release(j, now_s);
      scheduler::JobFacts f;
      f.id = job.name;
      f.arrival_s = job.arrival_s;
      f.min_workers = job.min_workers;
      f.max_workers = job.max_workers;
      f.remaining_samples = std::max(0.0, job.total_samples - summary.jobs[j].samples);
      f.throughput_per_worker = job.throughput;
      f.balances_batches = job.balances_batches;
      f.current = st.slots;
      f.service_by_kind = summary.jobs[j].device_s;
      f.waiting_s = st.slots.empty() ? now_s - st.waiting_since_s : 0.0;
      facts.jobs.push_back(std::move(f));
      present.push_back(j);
    }
    std::vector<SegmentStart> starts;
    if (!facts.jobs.empty()) {
      auto allocation = policy.decide(facts);
      if (!allocation) return allocation.status();
      for (std::size_t i = 0; i < present.size(); ++i) {
        const std::size_t j = present[i];
        const scheduler::JobAllocation& a = allocation->jobs[i];
        std::map<std::string, int> by_kind;
        for (const scheduler::DeviceSlot& s : a.slots) ++by_kind[cluster.hosts[s.host].kind];
        for (const auto& [kind, n] : by_kind) {
          summary.allocations_csv += run::allocations_csv_row(now_s, jobs[j].name, kind, n);
        }
        if (a.change == scheduler::JobChange::kKept || a.change == scheduler::JobChange::kWaiting) continue;
        JobState& st = state[j];
        TestbedJobOutcome& o = summary.jobs[j];
        if (!st.slots.empty()) {
          OMNI_RETURN_IF_ERROR(runner.stop(j));
          ++o.restarts;
          const JobProgress p = runner.progress(j);  // the checkpoint: what it trained until now
          o.samples = p.samples;
          o.steps = p.steps;
        }
        if (a.slots.empty()) st.waiting_since_s = now_s;
        st.slots = a.slots;
        st.held_since_s = now_s;
        if (st.slots.empty()) continue;
        if (o.start_s < 0.0) o.start_s = now_s;
        SegmentStart start;
        start.job = j;
        for (const scheduler::DeviceSlot& s : st.slots) start.kinds.push_back(cluster.hosts[s.host].kind);
        start.remaining_samples = std::max(0.0, jobs[j].total_samples - o.samples);
        starts.push_back(std::move(start));
      }
    }
    ++summary.rounds;
    if (options.on_round) options.on_round(now_s, summary.finished, jobs.size());
    // The next round; an idle cluster skips to the next arrival's round.
    Seconds next_s = now_s + round_s;
    Seconds next_arrival_s = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (!state[j].arrived) next_arrival_s = std::min(next_arrival_s, jobs[j].arrival_s);
    }
    if (present.empty() && next_arrival_s > next_s) next_s = round_s * std::ceil(next_arrival_s / round_s);
    if (options.max_time_s > 0.0) next_s = std::min(next_s, options.max_time_s);
    OMNI_RETURN_IF_ERROR(runner.run(now_s, next_s, starts));
    now_s = next_s;
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (!summary.jobs[j].finished()) release(j, now_s);
    summary.makespan_s = std::max(summary.makespan_s, summary.jobs[j].finished() ? summary.jobs[j].end_s : now_s);
  }
  return summary;
}

}  // namespace omnilearn::emulator
