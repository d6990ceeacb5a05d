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

// The rounds of one testbed run: each round records what the segments did, gives the scheduler the present jobs'
// facts, and applies its allocation by stopping and starting segments.
class TestbedRounds {
 public:
  TestbedRounds(const std::vector<TestbedJob>& jobs, const scheduler::ClusterFacts& cluster, SegmentRunner& runner)
      : jobs_(jobs), cluster_(cluster), runner_(runner), state_(jobs.size()) {
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

  // The facts of the jobs present at `now_s` (arrived, not finished), in `present`'s order.
  scheduler::RoundFacts facts(Seconds now_s, std::vector<std::size_t>& present) {
    scheduler::RoundFacts facts;
    facts.now_s = now_s;
    facts.cluster = cluster_;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      const TestbedJob& job = jobs_[j];
      JobState& st = state_[j];
      if (!st.arrived && job.arrival_s <= now_s) {
        st.arrived = true;
        st.waiting_since_s = job.arrival_s;
      }
      if (!st.arrived || summary_.jobs[j].finished()) continue;
      release(j, now_s);
      scheduler::JobFacts f;
      f.id = job.name;
      f.arrival_s = job.arrival_s;
      f.min_workers = job.min_workers;
      f.max_workers = job.max_workers;
      f.remaining_samples = std::max(0.0, job.total_samples - summary_.jobs[j].samples);
      f.throughput_per_worker = job.throughput;
      f.balances_batches = job.balances_batches;
      f.current = st.slots;
      f.service_by_kind = summary_.jobs[j].device_s;
      f.waiting_s = st.slots.empty() ? now_s - st.waiting_since_s : 0.0;
      facts.jobs.push_back(std::move(f));
      present.push_back(j);
    }
    return facts;
  }

  // Records the allocation's rows, stops the segments whose devices change and lists the segments to start.
  Status apply(Seconds now_s, const scheduler::Allocation& allocation, const std::vector<std::size_t>& present,
               std::vector<SegmentStart>& starts) {
    for (std::size_t i = 0; i < present.size(); ++i) {
      const std::size_t j = present[i];
      const scheduler::JobAllocation& a = allocation.jobs[i];
      std::map<std::string, int> by_kind;
      for (const scheduler::DeviceSlot& s : a.slots) ++by_kind[cluster_.hosts[s.host].kind];
      for (const auto& [kind, n] : by_kind) {
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

  // The next round's time: a round later, or, on an idle cluster, the round of the next arrival.
  Seconds next_round(Seconds now_s, Seconds round_s, bool idle, Seconds max_time_s) const {
    Seconds next_s = now_s + round_s;
    Seconds next_arrival_s = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      if (!state_[j].arrived) next_arrival_s = std::min(next_arrival_s, jobs_[j].arrival_s);
    }
    if (idle && next_arrival_s > next_s) next_s = round_s * std::ceil(next_arrival_s / round_s);
    return max_time_s > 0.0 ? std::min(next_s, max_time_s) : next_s;
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
  JobsTestbedSummary summary_;
};

}  // namespace

Result<JobsTestbedSummary> run_jobs_testbed(const std::vector<TestbedJob>& jobs, const scheduler::ClusterFacts& cluster,
                                            const JobsTestbedOptions& options, SegmentRunner& runner) {
  OMNI_RETURN_IF_ERROR(check_jobs_testbed(jobs, options));
  auto made = scheduler::make_default_scheduler_registry().make(options.scheduler, options.scheduling);
  if (!made) return made.status();
  scheduler::SchedulingPolicy& policy = **made;
  TestbedRounds rounds(jobs, cluster, runner);
  JobsTestbedSummary& summary = rounds.summary();
  Seconds now_s = 0.0;
  while (true) {
    rounds.record_progress();
    if (rounds.all_finished()) break;
    if (options.max_time_s > 0.0 && now_s >= options.max_time_s) {
      summary.stopped = "max-time " + shortest_number(options.max_time_s) + " s";
      break;
    }
    if (options.stop_requested && options.stop_requested()) {
      return Status::internal("stopped on request at " + shortest_number(now_s) + " s (emulated)");
    }
    std::vector<std::size_t> present;
    const scheduler::RoundFacts facts = rounds.facts(now_s, present);
    std::vector<SegmentStart> starts;
    if (!facts.jobs.empty()) {
      auto allocation = policy.decide(facts);
      if (!allocation) return allocation.status();
      OMNI_RETURN_IF_ERROR(rounds.apply(now_s, *allocation, present, starts));
    }
    ++summary.rounds;
    if (options.on_round) options.on_round(now_s, summary.finished, jobs.size());
    const Seconds next_s = rounds.next_round(now_s, options.scheduling.round_s, present.empty(), options.max_time_s);
    OMNI_RETURN_IF_ERROR(runner.run(now_s, next_s, starts));
    now_s = next_s;
  }
  rounds.finish(now_s);
  return std::move(summary);
}

}  // namespace omnilearn::emulator
