#include "omnilearn/emulator/jobs_testbed.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/run/jobs_stop.h"
#include "omnilearn/scheduler/round_driver.h"
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
  std::vector<scheduler::DeviceSlot> slots;  // held now
  Seconds held_since_s = 0.0;
  Seconds waiting_since_s = 0.0;
};

// A job's facts that do not change; the driver's copy is refreshed every round.
scheduler::JobFacts fixed_facts(const TestbedJob& job) {
  return scheduler::fixed_job_facts(job.name, job.arrival_s, job.min_workers, job.max_workers, job.throughput,
                                    job.balances_batches);
}

std::vector<Seconds> arrivals(const std::vector<TestbedJob>& jobs) {
  std::vector<Seconds> out;
  out.reserve(jobs.size());
  for (const TestbedJob& j : jobs) out.push_back(j.arrival_s);
  return out;
}

// The rounds of one testbed run on the scheduler's round driver: each round records what the segments did, refreshes
// the present jobs' facts, and applies the driver's allocation by stopping and starting segments.
class TestbedRounds {
 public:
  TestbedRounds(const std::vector<TestbedJob>& jobs, const scheduler::ClusterFacts& cluster,
                std::unique_ptr<scheduler::SchedulingPolicy> policy, SegmentRunner& runner)
      : jobs_(jobs),
        cluster_(cluster),
        runner_(runner),
        state_(jobs.size()),
        driver_(std::move(policy), cluster, arrivals(jobs), [&jobs](std::size_t j) { return fixed_facts(jobs[j]); }) {
    summary_.allocations_csv = run::allocations_csv_header(/*packing=*/false);
    for (const TestbedJob& j : jobs) {
      TestbedJobOutcome o;
      o.name = j.name;
      o.arrival_s = j.arrival_s;
      o.workers = j.workers;
      for (const std::string& k : cluster.kinds()) o.device_s[k] = 0.0;
      summary_.jobs.push_back(std::move(o));
    }
  }

  JobsTestbedSummary& summary() { return summary_; }
  scheduler::RoundDriver& driver() { return driver_; }
  bool all_finished() const { return summary_.finished == jobs_.size(); }

  // What the last round's segments trained; a segment that ended gives back its devices at its end.
  void record_progress() {
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      TestbedJobOutcome& o = summary_.jobs[j];
      if (o.finished()) continue;
      const JobProgress p = runner_.progress(j);
      o.samples = p.samples;
      o.steps = p.steps;
      if (p.end_s) {
        release(j, *p.end_s);
        o.end_s = *p.end_s;
        state_[j].slots.clear();
        ++summary_.finished;
      }
    }
  }

  // The jobs present at `now_s` (arrived, not finished), their facts refreshed in the driver.
  const std::vector<std::size_t>& present(Seconds now_s) {
    const auto finished = [&](std::size_t j) { return summary_.jobs[j].finished(); };
    const auto arrived = [&](std::size_t j) { state_[j].waiting_since_s = jobs_[j].arrival_s; };
    const std::vector<std::size_t>& present = driver_.advance(now_s, finished, arrived);
    for (std::size_t i = 0; i < present.size(); ++i) {
      const std::size_t j = present[i];
      const JobState& st = state_[j];
      release(j, now_s);
      scheduler::JobFacts& f = driver_.facts(i);
      f.remaining_samples = std::max(0.0, jobs_[j].total_samples - summary_.jobs[j].samples);
      f.current = st.slots;
      f.service_by_kind = summary_.jobs[j].device_s;
      f.waiting_s = st.slots.empty() ? now_s - st.waiting_since_s : 0.0;
    }
    return present;
  }

  // Records the allocation's rows, stops the segments whose devices change and lists the segments to start.
  Status apply(Seconds now_s, const scheduler::Allocation& allocation, const std::vector<std::size_t>& present,
               std::vector<SegmentStart>& starts) {
    for (std::size_t i = 0; i < present.size(); ++i) {
      const std::size_t j = present[i];
      const scheduler::JobAllocation& a = allocation.jobs[i];
      for (const auto& [kind, n] : driver_.by_kind(a.slots)) {
        summary_.allocations_csv += run::allocations_csv_row(now_s, jobs_[j].name, kind, n);
      }
      if (a.change == scheduler::JobChange::kKept || a.change == scheduler::JobChange::kWaiting) continue;
      JobState& st = state_[j];
      TestbedJobOutcome& o = summary_.jobs[j];
      if (!st.slots.empty()) {
        OMNI_RETURN_IF_ERROR(runner_.stop(j));
        ++o.restarts;
        const JobProgress p = runner_.progress(j);  // the checkpoint: what it trained until now
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
      for (const scheduler::DeviceSlot& s : st.slots) start.kinds.push_back(cluster_.hosts[s.host].kind);
      start.remaining_samples = std::max(0.0, jobs_[j].total_samples - o.samples);
      starts.push_back(std::move(start));
    }
    return Status::ok();
  }

  // The end of the run at `now_s`: device time of the jobs still holding devices, and the makespan.
  void finish(Seconds now_s) {
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      if (!summary_.jobs[j].finished()) release(j, now_s);
      summary_.makespan_s = std::max(summary_.makespan_s, summary_.jobs[j].finished() ? summary_.jobs[j].end_s : now_s);
    }
  }

 private:
  // Device time up to `until_s` (the job's end when it ended earlier).
  void release(std::size_t j, Seconds until_s) {
    for (const scheduler::DeviceSlot& s : state_[j].slots) {
      summary_.jobs[j].device_s[cluster_.hosts[s.host].kind] += until_s - state_[j].held_since_s;
    }
    state_[j].held_since_s = until_s;
  }

  const std::vector<TestbedJob>& jobs_;
  const scheduler::ClusterFacts& cluster_;
  SegmentRunner& runner_;
  std::vector<JobState> state_;
  scheduler::RoundDriver driver_;
  JobsTestbedSummary summary_;
};

}  // namespace

Result<JobsTestbedSummary> run_jobs_testbed(const std::vector<TestbedJob>& jobs, const scheduler::ClusterFacts& cluster,
                                            const JobsTestbedOptions& options, SegmentRunner& runner) {
  OMNI_RETURN_IF_ERROR(check_jobs_testbed(jobs, options));
  auto made = scheduler::make_default_scheduler_registry().make(options.scheduler, options.scheduling);
  if (!made) return made.status();
  TestbedRounds rounds(jobs, cluster, std::move(made).value(), runner);
  JobsTestbedSummary& summary = rounds.summary();
  Seconds now_s = 0.0;
  while (true) {
    rounds.record_progress();
    if (rounds.all_finished()) break;
    const run::StopReason stop = run::jobs_run_stop(now_s, options.max_time_s, options.stop_requested);
    if (stop == run::StopReason::kRequested) {
      return Status::internal("stopped on request at " + shortest_number(now_s) + " s (emulated)");
    }
    if (stop == run::StopReason::kTime) {
      summary.stopped = "max-time " + shortest_number(options.max_time_s) + " s";
      break;
    }
    const std::vector<std::size_t> present = rounds.present(now_s);
    std::vector<SegmentStart> starts;
    auto allocation = rounds.driver().decide();
    if (!allocation) return allocation.status();
    OMNI_RETURN_IF_ERROR(rounds.apply(now_s, *allocation, present, starts));
    ++summary.rounds;
    if (options.on_round) options.on_round(now_s, summary.finished, jobs.size());
    const Seconds next_s =
        rounds.driver().next_round(now_s, options.scheduling.round_s, present.empty(), options.max_time_s);
    OMNI_RETURN_IF_ERROR(runner.run(now_s, next_s, starts));
    now_s = next_s;
  }
  rounds.finish(now_s);
  return std::move(summary);
}

}  // namespace omnilearn::emulator
