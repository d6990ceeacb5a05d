// The multi-job simulator's BSP and one-worker stepping (cluster_sim.h).
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

void cancel_step(Job& job) {
  // A copy: each cancel is a simcall, during which the job's actor may wake and clear its list. Only what still
  // runs: a finished activity has left SimGrid's kernel.
  const std::vector<sg4::ActivityPtr> running = job.in_flight;
  for (const sg4::ActivityPtr& act : running) {
    if (act->get_state() == sg4::Activity::State::STARTED) act->cancel();
  }
}

// Whether the job's devices were taken (the scheduler moved it on since `generation`, or the run is over): then
// cancels what it has running, forgets it, and marks the step `interrupted`.
bool devices_taken(Job& job, std::uint64_t generation, bool over, bool& interrupted) {
  if (!over && job.generation == generation) return false;
  interrupted = true;
  cancel_step(job);
  job.in_flight.clear();
  return true;
}

Status ClusterSim::step(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                        const std::vector<std::string>& kinds, std::int64_t& step_index, bool& interrupted) {
  const std::size_t n = hosts.size();
  const controller::Plan& plan = ctl.current_plan();
  const Seconds t0 = sg4::Engine::get_clock();
  const std::vector<BatchSize> batches = plan.batch;  // plan_next replaces the plan
  if (options_.measured_steps) {  // Pollux's measured step of the job's placement, its steps as one execution
    auto step_s = pollux_step_s(*options_.pollux, *job.spec, job.adaptive, workers_per_node(hosts));
    if (!step_s.is_ok()) return step_s.status();
    run_steps(job, *step_s, current_batch(*job.spec, job.adaptive), hosts[0], true, false, step_index, interrupted);
    charge_busy(job, kinds, batches, t0);
    return Status::ok();
  }
  if (job.spec->mode == traces::JobMode::kAsp || n == 1) {
    // Energy: a solo job's steps are compute alone; an ASP job's workers compute or exchange with the server all
    // the time (docs/energy.md).
    const Status st = job.spec->mode == traces::JobMode::kAsp
                          ? asp_steps(job, ctl, hosts, step_index, interrupted)
                          : solo_steps(job, plan.batch[0], hosts[0], step_index, interrupted);
    charge_busy(job, kinds, batches, t0);
    return st;
  }
  // Steady and sharing its links with no other job's flows: nothing but a round can change its steps (allocations
  // change only at rounds; the switch does not saturate), so they take what the last one took, in one execution up
  // to the job's end, cut at a round that changes what it shares (the step in progress then ends as it began).
  if (steps_repeat(job)) {
    run_steps(job, job.last_step_s, plan.global_batch, hosts[0], true, true, step_index, interrupted);
    if (energy_) energy_->repeat_last(job.index, (sg4::Engine::get_clock() - t0) / job.last_step_s);
    return Status::ok();
  }
  // The scheduler cancels what runs when it takes the devices; an activity whose start was still in progress then
  // is caught here, after each start (SimGrid marks it started only when start() returns). A step cut short is
  // charged busy for what it ran.
  const std::uint64_t generation = job.generation;
  const auto taken = [&] {
    if (!devices_taken(job, generation, over_, interrupted)) return false;
    charge_busy(job, kinds, batches, t0);
    return true;
  };
  std::vector<sg4::ExecPtr> execs;
  std::vector<Seconds> compute_s(n, 0.0);
  job.in_flight.clear();
  for (std::size_t k = 0; k < n; ++k) {
    const BatchSize b = plan.batch[k];
    auto speed = worker_speed(job, job.worker_kinds[k], b);
    if (!speed.is_ok()) return speed.status();
    execs.push_back(sg4::Exec::init()->set_flops_amount(static_cast<double>(b) / *speed)->set_host(hosts[k]));
    job.in_flight.push_back(execs.back());
    execs.back()->start();
    if (taken()) return Status::ok();
  }
  try {
    for (std::size_t k = 0; k < n; ++k) {
      execs[k]->wait();
      compute_s[k] = execs[k]->get_finish_time() - t0;
    }
    if (n > 1) {
      // Ring all-reduce, bandwidth-equivalent: each worker sends 2(n-1)/n of the gradient to the next one, all at
      // once (each link carries what the ring's 2(n-1) phases put on it). Workers on one node exchange for free.
      std::vector<sg4::CommPtr> comms;
      const auto bytes = static_cast<std::uint64_t>(ring_allreduce_bytes(static_cast<double>(n), job.gradient_bytes));
      for (std::size_t k = 0; k < n; ++k) {
        sg4::Host* to = hosts[(k + 1) % n];
        if (to == hosts[k]) continue;
        comms.push_back(sg4::Comm::sendto_async(hosts[k], to, bytes));
        job.in_flight.push_back(comms.back());
        if (taken()) return Status::ok();
      }
      sg4::Comm::wait_all(comms);
    }
  } catch (const simgrid::Exception&) {
    // Cancelled by the scheduler: an execution raises CancelException, a flow NetworkFailureException.
    interrupted = true;
    cancel_step(job);  // the rest of the step too: the job no longer holds these devices
  }
  job.in_flight.clear();
  if (interrupted) {
    charge_busy(job, kinds, batches, t0);
    return Status::ok();
  }
  return step_done(job, ctl, kinds, batches, plan.global_batch, compute_s, t0, step_index);
}

Status ClusterSim::step_done(Job& job, controller::Controller& ctl, const std::vector<std::string>& kinds,
                             const std::vector<BatchSize>& batches, BatchSize global_batch,
                             const std::vector<Seconds>& compute_s, Seconds t0, std::int64_t& step_index) {
  const std::size_t n = batches.size();
  const Seconds t1 = sg4::Engine::get_clock();
  if (energy_) {
    // Each worker computes, waits for the slowest, then all communicate.
    const Seconds slowest_s = *std::max_element(compute_s.begin(), compute_s.end());
    std::vector<Seconds> wait_s(n);
    for (std::size_t k = 0; k < n; ++k) wait_s[k] = slowest_s - compute_s[k];
    energy_->step(job.index, kinds, std::vector<double>(batches.begin(), batches.end()), compute_s, wait_s,
                  t1 - t0 - slowest_s, energy_share(job));
  }
  ++step_index;
  for (std::size_t k = 0; k < n; ++k) {
    OMNI_RETURN_IF_ERROR(
        ctl.report(controller::IterationDone{static_cast<WorkerId>(k), step_index, t1, compute_s[k], batches[k]}));
  }
  job.outcome.samples += static_cast<double>(global_batch);
  ++job.outcome.steps;
  auto next = ctl.plan_next(controller::DecisionPoint{step_index, 0, t1});
  if (!next.is_ok()) return next.status();
  const Seconds took_s = t1 - t0;
  const bool same = next->batch == batches && std::abs(took_s - job.last_step_s) <= 1e-9 * took_s;
  job.steady_steps = same ? job.steady_steps + 1 : 0;
  job.last_step_s = took_s;
  return Status::ok();
}

void ClusterSim::cut_changed_runs() {
  for (const std::size_t j : driver_->present()) {
    Job& job = jobs_[j];
    if (job.run.since_s < 0.0 || !job.run.shares || job.cut || job.slots.empty() || steps_repeat(job)) continue;
    job.cut = true;
    cancel_step(job);
  }
}

bool ClusterSim::steps_repeat(const Job& job) const {
  if (job.steady_steps < 2) return false;
  bool alone = true;
  for (const scheduler::DeviceSlot& s : job.slots) alone = alone && hosts_[s.host].jobs == 1;
  if (alone) return true;
  if (job.spec->batch_policy != "uniform") return false;
  // On one node its workers exchange for free: its steps are its devices' alone, whoever else is on the node.
  if (job.slots.front().host == job.slots.back().host) return true;
  for (const scheduler::DeviceSlot& s : job.slots) {
    if (hosts_[s.host].talkers > 1) return false;
  }
  return true;
}

namespace {

// The steps of `run` completed `elapsed_s` after it began (a relative margin: their count may be large).
std::int64_t completed_steps(const Job::StepRun& run, Seconds elapsed_s) {
  const double completed = elapsed_s / run.step_s;
  return std::min(run.steps, static_cast<std::int64_t>(completed * (1.0 + 1e-12) + 1e-9));
}

}  // namespace

double Job::samples_at(Seconds now_s) const {
  if (run.since_s < 0.0 || now_s <= run.since_s) return outcome.samples;
  return outcome.samples + static_cast<double>(completed_steps(run, now_s - run.since_s) * run.batch);
}

bool ClusterSim::finish_cut_step(Job& job, sg4::Host* host, Seconds t0, std::int64_t& done, std::uint64_t generation) {
  if (done >= job.run.steps) return true;
  const Seconds left_s = t0 + static_cast<double>(done + 1) * job.run.step_s - sg4::Engine::get_clock();
  if (left_s > 0.0) {
    const sg4::ExecPtr exec = sg4::Exec::init()->set_flops_amount(left_s)->set_host(host);
    job.in_flight.assign(1, exec);
    exec->start();
    try {
      if (over_ || job.generation != generation) return false;  // taken while it started
      exec->wait();
    } catch (const simgrid::Exception&) {
      return false;
    }
  }
  ++done;
  job.steady_steps = 0;  // what its steps share changed: they go one by one until steady again
  return true;
}

void ClusterSim::run_steps(Job& job, Seconds step_s, BatchSize batch, sg4::Host* host, bool through, bool shares,
                           std::int64_t& step_index, bool& interrupted) {
  const Seconds t0 = sg4::Engine::get_clock();
  const auto left = static_cast<std::int64_t>(
      std::ceil(std::max(0.0, job.total_samples - job.outcome.samples) / static_cast<double>(batch)));
  std::int64_t m = next_round_s_ > t0 ? static_cast<std::int64_t>((next_round_s_ - t0) / step_s) : 0;
  m = std::max<std::int64_t>(1, through ? left : std::min(m, left));
  const std::uint64_t generation = job.generation;
  const sg4::ExecPtr exec = sg4::Exec::init()->set_flops_amount(static_cast<double>(m) * step_s)->set_host(host);
  job.in_flight.assign(1, exec);
  job.run = {t0, step_s, batch, m, shares};
  job.cut = false;
  exec->start();
  std::int64_t done = m;
  try {
    if (over_ || job.generation != generation) {  // taken while it started (see step())
      cancel_step(job);
      throw simgrid::CancelException(XBT_THROW_POINT, "the job's devices were taken");
    }
    exec->wait();
  } catch (const simgrid::Exception&) {
    // A preemption keeps the steps completed by then, as step by step; a cut also the one in progress.
    done = completed_steps(job.run, sg4::Engine::get_clock() - t0);
    interrupted =
        !job.cut || over_ || job.generation != generation || !finish_cut_step(job, host, t0, done, generation);
  }
  job.run = {};
  job.cut = false;
  job.in_flight.clear();
  step_index += done;
  job.outcome.steps += done;
  job.outcome.samples += static_cast<double>(done * batch);
}

Status ClusterSim::solo_steps(Job& job, BatchSize batch, sg4::Host* host, std::int64_t& step_index, bool& interrupted) {
  // One worker: no all-reduce, and its batch is the job's. Its steps until the job's end (packed: the next round) are
  // one execution of their summed time, which is what they would take one by one: nothing else can change the
  // device's speed (packed: before the round that may repack it).
  auto speed = worker_speed(job, job.worker_kinds[0], batch);
  if (!speed.is_ok()) return speed.status();
  // Packed: the fraction of its speed alone it keeps with its partner, fixed for the steps started now.
  // Unpacked, nothing but the scheduler taking the device can change them: they run through rounds.
  run_steps(job, static_cast<double>(batch) / (*speed * job.packed_fraction), batch, host, !options_.scheduling.packing,
            false, step_index, interrupted);
  return Status::ok();
}

}  // namespace omnilearn::sim::cluster
