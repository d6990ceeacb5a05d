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
#include "omnilearn/run/jobs_stop.h"
#include "omnilearn/traces/text_file.h"
#include "pollux_job_hooks.h"

namespace omnilearn::sim::cluster {

using traces::shortest_number;

namespace {

enum class Phase { kCompute, kPush, kPull };

struct AspWorker {
  Phase phase = Phase::kCompute;
  sg4::ActivityPtr activity;  // what it waits for now
  Seconds started_s = 0.0;
  Seconds compute_s = 0.0;
  BatchSize batch = 0;  // of the computation under way, or the one the pull under way carries
  bool held = false;    // its reply waits (SSP's bound): no activity
};

// One ASP segment of a job: each worker computes, pushes its gradient to the parameter server (on the node of the
// job's first device) and pulls the parameters back with its next batch. The job's rule (docs/asp-rules.md) is the
// single-job server's code: AspSpec::applies drops a push too stale (Ringmaster); AspSchedule holds a reply until
// SSP's bound lets the worker go on. Every worker starts on the parameters as they are now.
class AspStepper {
 public:
  AspStepper(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts, std::int64_t& step_index)
      : job_(job),
        ctl_(ctl),
        hosts_(hosts),
        step_index_(step_index),
        server_(hosts.front()),  // the job's first device's node (slots are sorted)
        bytes_(static_cast<std::uint64_t>(job.gradient_bytes)),
        w_(hosts.size()),
        schedule_(job.asp, hosts.size()),
        updates_(job.outcome.steps),
        staleness_(hosts.size()) {
    for (std::size_t k = 0; k < hosts.size(); ++k) staleness_.pulled(static_cast<WorkerId>(k), updates_);
    job.in_flight.clear();
  }

  std::vector<AspWorker>& workers() { return w_; }
  bool finished() const { return finished_; }

  Status compute(std::size_t k) {
    const BatchSize b = w_[k].batch;
    auto speed = worker_speed(job_, job_.worker_kinds[k], b);
    if (!speed.is_ok()) return speed.status();
    w_[k].phase = Phase::kCompute;
    w_[k].started_s = sg4::Engine::get_clock();
    const sg4::ExecPtr exec = sg4::Exec::init()
                                  ->set_flops_amount(static_cast<double>(b) / (*speed * job_.packed_fraction))
                                  ->set_host(hosts_[k]);
    start(k, exec);
    exec->start();
    return Status::ok();
  }

  // What k's finished activity leads to: a push, the server's update, or the next computation.
  Status advance(std::size_t k) {
    switch (w_[k].phase) {
      case Phase::kCompute:
        w_[k].compute_s = sg4::Engine::get_clock() - w_[k].started_s;
        if (hosts_[k] == server_) return apply(k);
        w_[k].phase = Phase::kPush;
        start(k, sg4::Comm::sendto_async(hosts_[k], server_, bytes_));
        return Status::ok();
      case Phase::kPush:
        return apply(k);
      case Phase::kPull:
        return compute(k);
    }
    return Status::ok();
  }

 private:
  void start(std::size_t k, sg4::ActivityPtr activity) {
    w_[k].activity = std::move(activity);
    job_.in_flight.push_back(w_[k].activity);
  }

  // k pulls the parameters with its next batch (free on the server's node: it computes again at once).
  Status pull(std::size_t k, BatchSize batch) {
    w_[k].batch = batch;
    staleness_.pulled(static_cast<WorkerId>(k), updates_);
    if (hosts_[k] == server_) return compute(k);
    w_[k].phase = Phase::kPull;
    start(k, sg4::Comm::sendto_async(server_, hosts_[k], bytes_));
    return Status::ok();
  }

  // The server applies k's push now (an update and its samples towards the job's, unless the rule drops it: a dropped
  // push is no progress); the job's controller sees k's compute time and plans; k pulls, now or when the rule
  // releases it.
  Status apply(std::size_t k) {
    const Seconds t = sg4::Engine::get_clock();
    if (job_.asp.applies(staleness_.of(static_cast<WorkerId>(k), updates_))) {
      ++updates_;
      staleness_.applied_own(static_cast<WorkerId>(k));
      ++step_index_;
      ++job_.outcome.steps;
      job_.outcome.samples += static_cast<double>(w_[k].batch);
    } else {
      ++job_.dropped_pushes;  // no progress: the job's samples count only what its parameters took in
    }
    OMNI_RETURN_IF_ERROR(
        ctl_.report(controller::IterationDone{static_cast<WorkerId>(k), step_index_, t, w_[k].compute_s, w_[k].batch}));
    if (run::job_trained(job_.outcome.steps, job_.outcome.samples, job_.total_samples)) {
      finished_ = true;
      return Status::ok();
    }
    auto next = ctl_.plan_next(controller::DecisionPoint{step_index_, 0, t});
    if (!next.is_ok()) return next.status();
    if (!schedule_.holds()) return pull(k, next->batch[k]);
    schedule_.pushed(static_cast<WorkerId>(k), /*epoch_ended=*/false);
    w_[k].held = true;
    bool barrier_opened = false;  // never: pulls follow every push
    const run::AspSchedule::LiveFn all_live = [](WorkerId) { return true; };
    for (const WorkerId j : schedule_.release(all_live, barrier_opened)) {
      w_[j].held = false;
      OMNI_RETURN_IF_ERROR(pull(j, ctl_.current_plan().batch[j]));
    }
    return Status::ok();
  }

  Job& job_;
  controller::Controller& ctl_;
  const std::vector<sg4::Host*>& hosts_;
  std::int64_t& step_index_;
  sg4::Host* const server_;
  const std::uint64_t bytes_;
  std::vector<AspWorker> w_;
  run::AspSchedule schedule_;
  std::int64_t updates_;
  run::AspStaleness staleness_;
  bool finished_ = false;
};

}  // namespace

Status ClusterSim::asp_steps(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                             std::int64_t& step_index, bool& interrupted) {
  const std::size_t n = hosts.size();
  const std::uint64_t generation = job.generation;
  AspStepper stepper(job, ctl, hosts, step_index);
  std::vector<AspWorker>& w = stepper.workers();
  const auto taken = [&] { return devices_taken(job, generation, over_, interrupted); };
  for (std::size_t k = 0; k < n; ++k) {
    w[k].batch = ctl.current_plan().batch[k];
    OMNI_RETURN_IF_ERROR(stepper.compute(k));
    if (taken()) return Status::ok();
  }
  while (true) {
    std::vector<sg4::ActivityPtr> waiting;
    for (const AspWorker& x : w) {
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
      OMNI_RETURN_IF_ERROR(stepper.advance(k));
      if (stepper.finished()) {
        cancel_step(job);  // the other workers' computations and flows end with the job
        job.in_flight.clear();
        return Status::ok();
      }
      if (taken()) return Status::ok();
    }
  }
}

}  // namespace omnilearn::sim::cluster
