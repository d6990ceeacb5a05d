#include "bsp_driver.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "analytic_compute.h"
#include "omnilearn/base/check.h"
#include "omnilearn/sim/quota_wait.h"
#include "simgrid_settings.h"

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;

Seconds now() { return sg4::Engine::get_clock(); }

// Whether the coordinator may compute the computations' ends itself: analytic_compute.h repeats SimGrid's default CPU
// model on hosts that run one computation each and change speed only through the availability model. A platform
// file's hosts may carry their own profiles or serve two workers, and another CPU model or precision computes
// otherwise: those runs keep the activities.
bool analytic_compute_applies(const scenarios::Scenario& scenario) {
  return scenario.cluster.topology != scenarios::Topology::kPlatformFile && cpu_is_default_lazy_cas01();
}

}  // namespace

BspDriver::BspDriver(RunContext& context)
    : ctx_(context),
      progress_(context.stop, context.options.progress, context.options.stop_requested),
      slots_(context.platform.worker_count),
      collective_(context.scenario, context.platform, context.cost.gradient_bytes(),
                  context.options.flow_allreduce_max_workers),
      phase_rng_(context.scenario.seed) {}

bool BspDriver::per_worker_actors(const SimOptions& options, std::size_t workers) {
  switch (options.bsp_actors) {
    case SimOptions::BspActors::kPerWorker: return true;
    case SimOptions::BspActors::kCoordinator: return false;
    case SimOptions::BspActors::kAuto: break;
  }
  return workers <= options.flow_allreduce_max_workers;
}

std::size_t BspDriver::actor_count(const SimOptions& options, std::size_t workers) {
  const std::size_t drivers =
      per_worker_actors(options, workers) ? workers : (workers + kWorkersPerStepper - 1) / kWorkersPerStepper;
  return drivers + 1;  // and the coordinator
}

bool BspDriver::needs_worker_hosts(const scenarios::Scenario& scenario, const SimOptions& options,
                                   std::size_t never_down_workers) {
  const std::size_t n = scenario.cluster.workers.size();
  if (!options.compact_platform || scenario.mode != controller::TrainingMode::kBsp ||
      scenario.cluster.topology != scenarios::Topology::kStar || per_worker_actors(options, n) ||
      !analytic_compute_applies(scenario)) {
    return true;
  }
  // The ring's flows run in SimGrid up to flow_allreduce_max_workers participants.
  if (star_ring(scenario)) return never_down_workers <= options.flow_allreduce_max_workers;
  return !uniform_star(scenario.cluster);
}

void BspDriver::start() {
  const auto n = static_cast<unsigned>(slots_.size());
  per_worker_ = per_worker_actors(ctx_.options, n);
  analytic_ = !per_worker_ && analytic_compute_applies(ctx_.scenario);
  OMNI_CHECK(analytic_ || !ctx_.platform.workers.empty(), "BspDriver: SimGrid activities need the workers' hosts");
  if (ctx_.links != nullptr) collective_.set_link_energy(ctx_.links);
  if (const run::EnergyMeter* meter = ctx_.recorder.energy_meter(); meter != nullptr && meter->has_figures()) {
    const scenarios::EnergySpec& spec = meter->spec();
    previous_ = spec.slowing_decision == scenarios::SlowingDecision::kPrevious &&
                (spec.objective.has_value() || spec.slow_with_slack);
    objective_ = spec.objective.has_value() || previous_;
    if (previous_) predictor_.emplace(slots_.size()), last_level_.assign(slots_.size(), -1.0);
  }
  if (analytic_) read_peak_speeds();
  if (per_worker_) {
    start_ = sg4::Barrier::create(n + 1);
    end_ = sg4::Barrier::create(n + 1);
    for (WorkerId k = 0; k < n; ++k) {
      sg4::Actor::create("worker-" + std::to_string(k), ctx_.platform.workers[k], [this, k] { worker(k); });
    }
  } else if (!analytic_) {
    // SimGrid 3.32 keeps an actor's activities in a list it searches on every completion: one actor starting
    // every worker's computation costs O(N^2) per step; a stepper per kWorkersPerStepper workers keeps it linear.
    const unsigned steppers = (n + kWorkersPerStepper - 1) / kWorkersPerStepper;
    start_ = sg4::Barrier::create(steppers + 1);
    end_ = sg4::Barrier::create(steppers + 1);
    for (unsigned g = 0; g < steppers; ++g) {
      const WorkerId first = g * kWorkersPerStepper, last = std::min(n, first + kWorkersPerStepper);
      sg4::Actor::create("stepper-" + std::to_string(g), ctx_.platform.parameter_server,
                         [this, first, last] { stepper(first, last); });
    }
  }
  sg4::Actor::create("coordinator", ctx_.platform.parameter_server, [this] { coordinator(); });
}

void BspDriver::on_availability(WorkerId worker, double fraction) {
  Slot& s = slots_[worker];
  // A coordinator's activity may be over already, not yet waited for: it stays a completed iteration.
  if (fraction <= 0.0 && s.exec && !s.exec->test()) {
    s.cancel_s = now();
    s.exec->cancel();
  }
}

void BspDriver::fail(const Status& status) {
  if (status_.is_ok()) status_ = status;
}

void BspDriver::worker(WorkerId k) {
  Slot& slot = slots_[k];
  while (true) {
    start_->wait();
    if (done_) return;
    if (!slot.participating) {
      end_->wait();
      continue;
    }
    const Seconds t0 = now();
    slot.exec = sg4::this_actor::exec_init(step_flops(k, slot.batch));
    try {
      slot.exec->wait();
    } catch (const simgrid::CancelException&) {
      lose(k);
    }
    slot.exec = nullptr;
    const Seconds t1 = now();
    // Stored before the compute barrier: slow_step reads every participant's.
    slot.compute_s = t1 - t0;
    slot.compute_end_s = t1;
    compute_->wait();
    Seconds t2 = now();
    if (objective_) {
      t2 = slow_step(t0);
      if (t2 > now()) sg4::this_actor::sleep_until(t2);
    }
    // Every participant takes part in the all-reduce (collective_step.h), an aborted one too.
    const Seconds comm_end = collective_.run(k, t0, t2);
    // Stored before the end barrier: the coordinator reads them as soon as it is released.
    slot.comm_start_s = t2;
    slot.comm_end_s = comm_end;
    end_->wait();
  }
}

double BspDriver::step_flops(WorkerId k, BatchSize b) {
  // Measured noise (it includes the quota's phase jitter) replaces the sampled quota phase.
  const bool measured_noise = ctx_.cost.has_noise() || ctx_.cost.jitter_cv() > 0.0;
  std::optional<double> phase;
  if (!measured_noise && ctx_.cost.bursts(k)) phase = std::uniform_real_distribution<double>(0.0, 1.0)(phase_rng_);
  const double flops = ctx_.cost.flops(k, b, phase);
  double jitter = 1.0;
  if (ctx_.cost.has_noise()) {
    // Noise in seconds at this worker's share, as a CV of this step's expected compute.
    const Seconds expected = flops / ctx_.cost.speed(k);
    jitter = jitter_factor(expected > 0.0 ? ctx_.cost.noise_std_s(k) / expected : 0.0);
  } else if (measured_noise) {
    jitter = jitter_factor(ctx_.cost.jitter_cv());
  }
  return flops * jitter;
}

void BspDriver::stepper(WorkerId first, WorkerId last) {
  // What the worker actors do between the start and the compute barrier, for workers [first, last): the same
  // computations on the same hosts from the same instant, so SimGrid finishes (or cancels) each one at the time it
  // would finish a worker actor's.
  while (true) {
    start_->wait();
    if (done_) return;
    const Seconds t0 = now();
    for (WorkerId k = first; k < last; ++k) {
      Slot& slot = slots_[k];
      if (!slot.participating) continue;
      // (Not Host::exec_async: SimGrid 3.32's runs on the calling actor's host.)
      slot.exec = sg4::Exec::init()->set_flops_amount(slot.flops)->set_host(ctx_.platform.workers[k]);
      slot.exec->start();
    }
    for (WorkerId k = first; k < last; ++k) {
      Slot& slot = slots_[k];
      if (!slot.exec) continue;
      Seconds t1 = 0.0;
      try {
        slot.exec->wait();
        t1 = slot.exec->get_finish_time();
      } catch (const simgrid::CancelException&) {
        lose(k);
        t1 = slot.cancel_s;
      }
      slot.exec = nullptr;
      slot.compute_s = t1 - t0;
      slot.compute_end_s = t1;
    }
    end_->wait();
  }
}

Seconds BspDriver::compute_analytic() {
  // No SimGrid activity: the clock moves once, to the last end. The availability actor still applies and reports
  // each change at its time, and a down it reports during the step was foreseen here (on_availability has nothing
  // to cancel).
  const Seconds t0 = now();
  Seconds last_end = t0;
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    Slot& slot = slots_[k];
    if (!slot.participating) continue;
    const ComputeEnd end = analytic_compute_end(ctx_.availability, k, t0, slot.flops, slot.peak_flops);
    if (end.aborted) lose(k);
    slot.compute_end_s = end.end_s;
    slot.compute_s = end.end_s - t0;
    last_end = std::max(last_end, end.end_s);
  }
  if (last_end > t0) sg4::this_actor::sleep_until(last_end);
  return last_end;
}

void BspDriver::read_peak_speeds() {
  // Host::get_speed(): the power state's speed, which SimGrid's rate multiplies by the speed profile's scale. The
  // compact platform has no hosts: build_platform's power states are the node's speed times their fractions.
  if (ctx_.platform.workers.empty()) {
    const std::vector<scenarios::NodeSpec>& nodes = ctx_.scenario.cluster.workers;
    for (WorkerId k = 0; k < slots_.size(); ++k) {
      slots_[k].peak_flops = nodes[k].speed_flops * ctx_.availability.pstate_fraction(k);
    }
    return;
  }
  for (WorkerId k = 0; k < slots_.size(); ++k) slots_[k].peak_flops = ctx_.platform.workers[k]->get_speed();
}

void BspDriver::run_step_coordinated() {
  // The draws in worker order, then the computations; the all-reduce starts when the last one is over (the
  // per-worker actors' compute barrier). With activities that is SimGrid's clock at the last one's end; the
  // analytic path takes the end it computed (a sleep's clock can differ from it in the last digit).
  const Seconds t0 = now();
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    if (slots_[k].participating) slots_[k].flops = step_flops(k, slots_[k].batch);
  }
  Seconds t2 = 0.0;
  if (analytic_) {
    t2 = compute_analytic();
  } else {
    start_->wait();
    end_->wait();
    t2 = now();
  }
  if (objective_) {
    t2 = slow_step(t0);
    if (t2 > now()) sg4::this_actor::sleep_until(t2);
  }
  // The all-reduce (collective_step.h) as the worker actors run it: an aborted participant takes part, but its
  // all-reduce ends when it starts.
  const std::vector<Seconds>& ends = collective_.run_for_all(t0, t2);
  const std::vector<WorkerId>& participants = collective_.participants();
  for (std::size_t i = 0; i < participants.size(); ++i) {
    Slot& slot = slots_[participants[i]];
    slot.comm_start_s = t2;
    slot.comm_end_s = ends[i];
  }
}

Seconds BspDriver::slow_step(Seconds step_start_s) {
  if (slowed_step_ == step_) return slowed_end_s_;
  slowed_step_ = step_;
  const run::EnergyMeter& meter = *ctx_.recorder.energy_meter();
  std::vector<run::StepWorker> workers;
  std::vector<WorkerId> chosen;
  double other_w = ctx_.links != nullptr ? ctx_.links->idle_w() : 0.0;  // the links draw it however long the step
  Seconds end = now();
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    const Slot& s = slots_[k];
    end = std::max(end, s.compute_end_s);
    if (!s.participating || s.aborted) {
      // Outside the step (or down since it lost its computation): its power over the phase, whatever its length.
      other_w += meter.step_power(k, 0, s.participating ? s.compute_end_s : step_start_s).idle_w;
      continue;
    }
    run::StepWorker w = meter.step_power(k, s.batch, step_start_s);
    w.compute_s = s.compute_s;
    workers.push_back(w);
    chosen.push_back(k);
  }
  if (previous_) {
    slowed_end_s_ = std::max(end, slow_step_on_previous(step_start_s, workers, chosen, other_w));
    return slowed_end_s_;
  }
  const run::StepFrequencies f = run::choose_step_frequencies(workers, other_w, meter.spec());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    Slot& s = slots_[chosen[i]];
    if (!(f.frequency[i] < 1.0) && f.state[i] < 0) continue;
    s.frequency = f.frequency[i];
    s.state = f.state[i];
    s.compute_end_s = step_start_s + s.compute_s / s.frequency;
    end = std::max(end, s.compute_end_s);
  }
  slowed_end_s_ = end;
  return end;
}

namespace {

// Hysteresis of a decision on earlier steps: a worker keeps its last state where the new one is the next state on
// either side (the law's grid step, or the next measured state), so that noise does not switch it back and forth and
// pay the switch each time; the guard of decide_step covers the one step. `last` is PowerState::level, the law's
// factor, or -1 (full speed).
void keep_adjacent_state(const run::StepWorker& w, double last, int& state, double& frequency, double& level) {
  if (level == last) return;
  if (w.states.empty()) {
    const double last_f = last < 0.0 ? 1.0 : last;
    if (std::abs(last_f - frequency) <= run::kLawStateStep * (1.0 + 1e-9)) frequency = last_f, level = last;
    return;
  }
  // Measured states, fastest first: full speed is position 0, states[i] position i + 1.
  int last_at = last < 0.0 ? 0 : -1;
  for (std::size_t i = 0; i < w.states.size() && last_at < 0; ++i) {
    if (w.states[i].level == last) last_at = static_cast<int>(i) + 1;
  }
  if (last_at >= 0 && std::abs((state + 1) - last_at) == 1) {
    state = last_at - 1, level = last;
    frequency = state < 0 ? 1.0 : 1.0 / w.states[static_cast<std::size_t>(state)].slowdown;
  }
}

}  // namespace

Seconds BspDriver::slow_step_on_previous(Seconds step_start_s, const std::vector<run::StepWorker>& workers,
                                         const std::vector<WorkerId>& chosen, double other_w) {
  const scenarios::EnergySpec& spec = ctx_.recorder.energy_meter()->spec();
  std::vector<run::StepWorker> predicted = workers;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const WorkerId k = chosen[i];
    predicted[i].compute_s =
        predictor_->has(k) ? predictor_->predict(k, static_cast<double>(slots_[k].batch)) : 0.0;
    predicted[i].spread = predictor_->has(k) ? predictor_->spread(k) : 0.0;
  }
  const run::StepFrequencies d = run::decide_step(predicted, other_w, spec);
  // What the oracle's choice would have given: the phase on this step's own times (the slack rule never stretches).
  Seconds oracle_end = step_start_s, end = step_start_s;
  for (const run::StepWorker& w : workers) oracle_end = std::max(oracle_end, step_start_s + w.compute_s);
  if (spec.objective) oracle_end = step_start_s + run::choose_step_frequencies(workers, other_w, spec).compute_phase_s;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const WorkerId k = chosen[i];
    Slot& s = slots_[k];
    int state = d.state[i];
    double frequency = d.frequency[i];
    double level = state >= 0 ? workers[i].states[static_cast<std::size_t>(state)].level
                   : frequency < 1.0 ? frequency
                                     : -1.0;
    keep_adjacent_state(workers[i], last_level_[k], state, frequency, level);
    if (level != last_level_[k]) {
      s.switch_s = spec.switch_cost_s;
      last_level_[k] = level;
      ++switches_;
      switch_s_ += s.switch_s;
    }
    s.frequency = frequency;
    s.state = state;
    s.compute_end_s = step_start_s + s.compute_s / s.frequency + s.switch_s;
    end = std::max(end, s.compute_end_s);
    predictor_->observe(k, static_cast<double>(s.batch), s.compute_s);
  }
  misprediction_s_ += std::max(0.0, end - oracle_end);
  return end;
}

void BspDriver::lose(WorkerId k) {
  slots_[k].aborted = true;  // the worker went down mid-iteration: its gradient never arrives
  collective_.lose(k);
}

double BspDriver::jitter_factor(double cv) {
  if (!(cv > 0.0)) return 1.0;
  const double sigma2 = std::log1p(cv * cv);  // of the log
  const double shared = ctx_.cost.jitter_shared() * sigma2, own = sigma2 - shared;
  const double z = std::normal_distribution<double>(0.0, 1.0)(phase_rng_);
  return std::exp(std::sqrt(shared) * step_z_ - 0.5 * shared + std::sqrt(own) * z - 0.5 * own);
}

std::size_t BspDriver::prepare_step() {
  const controller::Plan& plan = ctx_.controller.current_plan();
  if (ctx_.cost.jitter_cv() > 0.0 || ctx_.cost.has_noise()) {
    step_z_ = std::normal_distribution<double>(0.0, 1.0)(phase_rng_);
  }
  std::vector<WorkerId> participants;
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[k];
    s.batch = plan.batch[k];
    s.participating = s.batch > 0 && !ctx_.availability.is_down(k);
    s.aborted = false;
    s.frequency = 1.0;
    s.state = -1;
    s.switch_s = 0.0;
    s.compute_s = s.compute_end_s = s.comm_start_s = s.comm_end_s = 0.0;
    if (s.participating) participants.push_back(k);
  }
  const std::size_t p = participants.size();
  Seconds fixed_s = 0.0;
  if (p > 1) {
    // The profile's fixed all-reduce cost and, on a CPU-quota testbed, the waits for the most throttled
    // participant (the model's shares scaled by the current availability): at each ring step, or once when the
    // communication threads run outside the quota.
    const scenarios::ModelProfile& model = ctx_.scenario.workload.model;
    std::vector<double> shares;
    for (WorkerId k : participants) {
      if (auto share = ctx_.cost.cpu_share(k)) shares.push_back(*share * ctx_.availability.fraction(k));
    }
    fixed_s =
        model.allreduce_fixed_s +
        quota_ring_wait_s(shares, model.quota_period_s, quota_waits_per_allreduce(p, model.quota_holds_comm));
  }
  collective_.prepare(std::move(participants), fixed_s);
  return p;
}

void BspDriver::close_step(Seconds step_start_s) {
  const Seconds t = now();
  std::int64_t samples = 0;
  std::vector<std::optional<BatchOutcome>> outcomes;  // virtual-time training: what each worker's batch computed
  if (ctx_.training != nullptr) {
    std::vector<BatchSize> batch(slots_.size(), 0);
    std::vector<bool> lost(slots_.size(), false);
    for (WorkerId k = 0; k < slots_.size(); ++k) {
      if (slots_[k].participating) batch[k] = slots_[k].batch, lost[k] = slots_[k].aborted;
    }
    outcomes = ctx_.training->bsp_step(batch, lost);
  }
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    const Slot& s = slots_[k];
    if (!s.participating) continue;
    if (!s.aborted) {
      samples += s.batch;
      const Status st = ctx_.controller.report(controller::IterationDone{k, step_, t, s.compute_s, s.batch});
      if (!st.is_ok()) fail(st);
    }
    run::IterationRecord r;
    r.worker = k;
    r.step = step_;
    r.epoch = progress_.epoch();
    r.start_s = step_start_s;
    const bool slowed = s.frequency < 1.0 || s.state >= 0 || s.switch_s > 0.0;
    r.compute_s = slowed ? s.compute_end_s - step_start_s : s.compute_s;
    r.frequency = s.frequency;
    r.power_state = s.state;
    r.switch_s = s.switch_s;
    r.comm_s = s.comm_end_s - s.comm_start_s;
    r.wait_s = (s.comm_start_s - s.compute_end_s) + (t - s.comm_end_s);
    r.batch = s.aborted ? 0 : s.batch;  // an aborted iteration processed nothing
    if (k < outcomes.size() && outcomes[k]) r.loss = outcomes[k]->loss, r.accuracy = outcomes[k]->accuracy;
    ctx_.recorder.iteration(r);
  }
  ++step_;
  const bool epoch_ended = progress_.add(samples, t);
  if (epoch_ended) {
    ctx_.availability.enter_epoch(progress_.epoch(), t);
    if (analytic_) read_peak_speeds();
  }
  if (ctx_.training != nullptr) ctx_.training->after_update(step_, progress_.epoch(), epoch_ended, t);
}

void BspDriver::coordinator() {
  while (status_.is_ok() && !finished()) {
    const std::size_t participants = prepare_step();
    if (participants == 0) {
      // Every worker is down: wait for the next availability change, then ask for a plan again.
      if (!ctx_.availability.changes_pending()) {
        fail(Status::invalid_argument("availability: every worker is down at t=" + std::to_string(now()) +
                                      " s and none returns"));
        break;
      }
      sg4::this_actor::sleep_until(ctx_.availability.next_change_s());
      sg4::this_actor::yield();  // let the availability actor apply a change due now
      auto plan = ctx_.controller.plan_next(controller::DecisionPoint{step_, progress_.epoch(), now()});
      if (!plan) {
        fail(plan.status());
        break;
      }
      ctx_.recorder.plan(*plan, progress_.epoch());
      continue;
    }
    const Seconds step_start = now();
    if (per_worker_) {
      compute_ = sg4::Barrier::create(static_cast<unsigned>(participants));
      start_->wait();
      end_->wait();
    } else {
      run_step_coordinated();
    }
    Seconds last_comm_end = now();
    for (const Slot& slot : slots_) {
      if (slot.participating) last_comm_end = std::max(last_comm_end, slot.comm_end_s);
    }
    if (last_comm_end > now()) sg4::this_actor::sleep_until(last_comm_end);
    close_step(step_start);
    if (finished()) break;
    auto plan = ctx_.controller.plan_next(controller::DecisionPoint{step_, progress_.epoch(), now()});
    if (!plan) {
      fail(plan.status());
      break;
    }
    ctx_.recorder.plan(*plan, progress_.epoch());
  }
  end_time_s_ = now();
  done_ = true;
  progress_.finish();
  if (start_) start_->wait();  // releases the workers (or steppers), which see done_ and return
}

run::RunSummary BspDriver::summary() const {
  run::RunSummary s;
  s.mode = "bsp";
  s.workers = static_cast<std::int64_t>(slots_.size());
  s.iterations = step_;
  s.epochs = progress_.epoch();
  s.total_time_s = end_time_s_;
  s.mean_iteration_s = step_ > 0 ? end_time_s_ / static_cast<double>(step_) : 0.0;
  s.epoch_time_s = progress_.epoch_time_s();
  s.extra["samples"] = static_cast<double>(progress_.samples());
  collective_.add_summary(s);
  if (previous_) {
    // slowing_decision previous: the time its decisions lost against the oracle's (switches included), and the
    // switches (docs/energy.md, "Slowing as it would run").
    s.extra["slowing_misprediction_s"] = misprediction_s_;
    s.extra["slowing_switches"] = static_cast<double>(switches_);
    s.extra["slowing_switch_s"] = switch_s_;
  }
  return s;
}

}  // namespace omnilearn::sim
