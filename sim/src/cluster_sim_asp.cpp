// The multi-job simulator's ASP stepping: workers, the parameter server and its rule (cluster_sim.h).
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

#include "cluster_sim.h"
#include "collective_model.h"
#include "omnilearn/run/asp_schedule.h"
#include "omnilearn/traces/text_file.h"
#include "pollux_job_hooks.h"

namespace omnilearn::sim::cluster {

using traces::shortest_number;

Status ClusterSim::asp_steps(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                             std::int64_t& step_index, bool& interrupted) {
  const std::size_t n = hosts.size();
  sg4::Host* const server = hosts.front();  // the job's first device's node (slots are sorted)
  const auto bytes = static_cast<std::uint64_t>(job.gradient_bytes);
  const std::uint64_t generation = job.generation;
  enum class Phase { kCompute, kPush, kPull };
  struct Worker {
    Phase phase = Phase::kCompute;
    sg4::ActivityPtr activity;  // what it waits for now
    Seconds started_s = 0.0;
    Seconds compute_s = 0.0;
    BatchSize batch = 0;  // of the computation under way, or the one the pull under way carries
    bool held = false;    // its reply waits (SSP's bound): no activity
  };
  std::vector<Worker> w(n);
  // The job's rule (docs/asp-rules.md), with the single-job server's code: AspSpec::applies drops a push too stale
  // (Ringmaster); AspSchedule holds a reply until SSP's bound lets the worker go on. Every worker starts on the
  // parameters as they are now.
  run::AspSchedule schedule(job.asp, n);
  const run::AspSchedule::LiveFn all_live = [](WorkerId) { return true; };
  std::int64_t updates = job.outcome.steps;
  run::AspStaleness staleness(n);  // every worker starts on the parameters as they are now
  for (std::size_t k = 0; k < n; ++k) staleness.pulled(static_cast<WorkerId>(k), updates);
  job.in_flight.clear();
  const auto start = [&](std::size_t k, sg4::ActivityPtr activity) {
    w[k].activity = std::move(activity);
    job.in_flight.push_back(w[k].activity);
  };
  const auto compute = [&](std::size_t k) -> Status {
    const BatchSize b = w[k].batch;
    auto speed = worker_speed(job, job.worker_kinds[k], b);
    if (!speed.is_ok()) return speed.status();
    w[k].phase = Phase::kCompute;
    w[k].started_s = sg4::Engine::get_clock();
    const sg4::ExecPtr exec = sg4::Exec::init()
                                  ->set_flops_amount(static_cast<double>(b) / (*speed * job.packed_fraction))
                                  ->set_host(hosts[k]);
    start(k, exec);
    exec->start();
    return Status::ok();
  };
  bool finished = false;
  // k pulls the parameters with its next batch (free on the server's node: it computes again at once).
  const auto pull = [&](std::size_t k, BatchSize batch) -> Status {
    w[k].batch = batch;
    staleness.pulled(static_cast<WorkerId>(k), updates);
    if (hosts[k] == server) return compute(k);
    w[k].phase = Phase::kPull;
    start(k, sg4::Comm::sendto_async(server, hosts[k], bytes));
    return Status::ok();
  };
  // The server applies k's push now (an update, unless the rule drops it); the job's controller sees k's compute
  // time and plans; k pulls, now or when the rule releases it.
  const auto apply = [&](std::size_t k) -> Status {
    const Seconds t = sg4::Engine::get_clock();
    if (job.asp.applies(staleness.of(static_cast<WorkerId>(k), updates))) {
      ++updates;
      staleness.applied_own(static_cast<WorkerId>(k));
      ++step_index;
      ++job.outcome.steps;
    } else {
      ++job.dropped_pushes;
    }
    job.outcome.samples += static_cast<double>(w[k].batch);
    OMNI_RETURN_IF_ERROR(
        ctl.report(controller::IterationDone{static_cast<WorkerId>(k), step_index, t, w[k].compute_s, w[k].batch}));
    if (job.outcome.samples >= job.total_samples) {
      finished = true;
      return Status::ok();
    }
    auto next = ctl.plan_next(controller::DecisionPoint{step_index, 0, t});
    if (!next.is_ok()) return next.status();
    if (!schedule.holds()) return pull(k, next->batch[k]);
    schedule.pushed(static_cast<WorkerId>(k), /*epoch_ended=*/false);
    w[k].held = true;
    bool barrier_opened = false;  // never: pulls follow every push
    for (const WorkerId j : schedule.release(all_live, barrier_opened)) {
      w[j].held = false;
      OMNI_RETURN_IF_ERROR(pull(j, ctl.current_plan().batch[j]));
    }
    return Status::ok();
  };
  const auto advance = [&](std::size_t k) -> Status {
    switch (w[k].phase) {
      case Phase::kCompute:
        w[k].compute_s = sg4::Engine::get_clock() - w[k].started_s;
        if (hosts[k] == server) return apply(k);
        w[k].phase = Phase::kPush;
        start(k, sg4::Comm::sendto_async(hosts[k], server, bytes));
        return Status::ok();
      case Phase::kPush:
        return apply(k);
      case Phase::kPull:
        return compute(k);
    }
    return Status::ok();
  };
  const auto taken = [&] { return devices_taken(job, generation, over_, interrupted); };
  for (std::size_t k = 0; k < n; ++k) {
    w[k].batch = ctl.current_plan().batch[k];
    OMNI_RETURN_IF_ERROR(compute(k));
    if (taken()) return Status::ok();
  }
  while (true) {
    std::vector<sg4::ActivityPtr> waiting;
    for (const Worker& x : w) {
      if (!x.held) waiting.push_back(x.activity);
    }
    job.in_flight = waiting;
    try {
      sg4::Activity::wait_any(waiting);
    } catch (const simgrid::Exception&) {
      // Cancelled by the scheduler: computations and pushes not yet applied are lost.
      interrupted = true;
      cancel_step(job);
      job.in_flight.clear();
      return Status::ok();
    }
    // What ended at this instant, in worker order (determinism).
    std::vector<std::size_t> ended;
    for (std::size_t k = 0; k < n; ++k) {
      if (!w[k].held && w[k].activity->get_state() == sg4::Activity::State::FINISHED) ended.push_back(k);
    }
    for (const std::size_t k : ended) {
      OMNI_RETURN_IF_ERROR(advance(k));
      if (finished) {
        cancel_step(job);  // the other workers' computations and flows end with the job
        job.in_flight.clear();
        return Status::ok();
      }
      if (taken()) return Status::ok();
    }
  }
}

}  // namespace omnilearn::sim::cluster
