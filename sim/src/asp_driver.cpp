#include "asp_driver.h"

#include <algorithm>
#include <mutex>
#include <string>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <xbt/config.hpp>

#include "simgrid_settings.h"

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;

Seconds now() { return sg4::Engine::get_clock(); }

sg4::Mailbox* server_mailbox() { return sg4::Mailbox::by_name("parameter-server"); }
sg4::Mailbox* worker_mailbox(WorkerId k) { return sg4::Mailbox::by_name("worker-" + std::to_string(k)); }

// A reply that carries no parameters (pull: per-epoch between barriers): the worker's next batch and the counts.
constexpr std::uint64_t kReplyHeaderBytes = 64;

}  // namespace

std::optional<ServerLinkSpec> asp_server_link(const scenarios::Scenario& scenario, const SimOptions& options) {
  if (scenario.worker_count() <= options.asp_flow_max_workers || !network_is_plain_cm02()) return std::nullopt;
  return server_link_spec(scenario.cluster, simgrid::config::get_value<double>("network/TCP-gamma"));
}

std::string asp_link_path(const scenarios::Scenario& scenario, const SimOptions& options) {
  return asp_server_link(scenario, options) ? "asp-server-link-analytic" : "asp-push-pull";
}

AspDriver::AspDriver(RunContext& context)
    : ctx_(context),
      progress_(context.stop, context.options.progress, context.options.stop_requested),
      slots_(context.platform.workers.size()),
      staleness_(context.platform.workers.size()),
      schedule_(context.scenario.workload.asp, context.platform.workers.size()),
      pulls_(context.platform.workers.size(), true),
      barrier_pull_(context.platform.workers.size(), false),
      per_epoch_(context.scenario.workload.asp.pull == scenarios::AspPull::kPerEpoch),
      ceil_epochs_(context.scenario.workload.asp.epochs == scenarios::AspEpochs::kCeil),
      log_(context.platform.workers.size(), context.stop.limits().dataset_samples) {
  auto spec = asp_server_link(context.scenario, context.options);
  if (!spec) return;
  auto push = FairShareLink::create(spec->server_Bps, spec->classes);
  auto pull = FairShareLink::create(spec->server_Bps, spec->classes);
  if (!push || !pull) {
    fail(push ? pull.status() : push.status());
    return;
  }
  link_.emplace(std::move(*spec), std::move(*push), std::move(*pull));
}

void AspDriver::start() {
  mutex_ = sg4::Mutex::create();
  wake_ = sg4::ConditionVariable::create();
  server_inbox_ = server_mailbox();
  if (link_) {
    link_->mutex = sg4::Mutex::create();
    link_->wake = sg4::ConditionVariable::create();
  }
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    if (link_) {
      slots_[k].arrived = sg4::Semaphore::create(0);
    } else {
      slots_[k].inbox = worker_mailbox(k);  // looked up once: by name it costs a string and a map search per update
      slots_[k].turn = sg4::Semaphore::create(0);
    }
    sg4::Actor::create("worker-" + std::to_string(k), ctx_.platform.workers[k], [this, k] { worker(k); });
  }
  // A daemon: the run ends when every worker has returned; the server is never blocked on a finished run.
  sg4::Actor::create("parameter-server", ctx_.platform.parameter_server, [this] {
    if (link_) {
      link_server();
    } else {
      server();
    }
  })->daemonize();
}

void AspDriver::on_availability(WorkerId worker, double fraction) {
  Slot& s = slots_[worker];
  if (fraction <= 0.0 && s.exec) s.exec->cancel();
  // Only a down worker waits for this; a notification nobody waits for would still cost a simcall per change.
  if (fraction > 0.0 && waiting_ > 0 && !sg4::this_actor::is_maestro()) wake_->notify_all();
}

void AspDriver::fail(const Status& status) {
  if (status_.is_ok()) status_ = status;
}

BatchSize AspDriver::batch_for(WorkerId k) const {
  const BatchSize b = ctx_.controller.current_plan().batch[k];
  // A worker that just returned keeps its bounds' lower end until the controller gives it a batch.
  return b > 0 ? b : ctx_.controller.options().workers[k].lo;
}

void AspDriver::worker(WorkerId k) {
  Slot& slot = slots_[k];
  BatchSize batch = batch_for(k);
  while (!done_) {
    if (ctx_.availability.is_down(k)) {
      if (schedule_.holds()) send_down_notice(k);
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      ++waiting_;
      wake_->wait(lock, [&] { return done_ || !ctx_.availability.is_down(k); });
      --waiting_;
      batch = batch_for(k);
      if (schedule_.holds()) schedule_.rejoin(k, [this](WorkerId j) { return !ctx_.availability.is_down(j); });
      if (ctx_.training != nullptr) {
        // Virtual-time training: as the testbed's worker, which keeps pulling while down (batch 0), it returns with
        // the server's current parameters, and its next push's staleness counts from now.
        staleness_.pulled(k, updates_);
        log_.pulled(k);
        ctx_.training->asp_pull(k);
      }
      continue;
    }
    const Seconds t0 = now();
    const std::int64_t epoch = progress_.epoch();
    slot.exec = sg4::this_actor::exec_init(ctx_.cost.flops(k, batch));
    bool aborted = false;
    try {
      slot.exec->wait();
    } catch (const simgrid::CancelException&) {
      aborted = true;  // went down mid-iteration: the gradient is lost
    }
    slot.exec = nullptr;
    if (aborted) continue;
    const Seconds t1 = now();
    slot.push = Push{k, batch, t1 - t0, t0};
    const Reply& reply = exchange(k);
    const Seconds t2 = now();
    run::IterationRecord r;
    r.worker = k;
    r.step = reply.update;
    r.epoch = epoch;
    r.start_s = t0;
    r.compute_s = t1 - t0;
    r.comm_s = t2 - t1 - reply.held_s;
    r.wait_s = reply.held_s;
    r.batch = batch;
    r.staleness = reply.staleness;
    if (reply.outcome) r.loss = reply.outcome->loss, r.accuracy = reply.outcome->accuracy;
    ctx_.recorder.iteration(r);
    batch = reply.batch;
  }
}

const AspDriver::Reply& AspDriver::exchange(WorkerId k) {
  Slot& slot = slots_[k];
  // A SimGrid flow carries whole bytes: so does the analytic link.
  const auto bytes = static_cast<std::uint64_t>(ctx_.cost.gradient_bytes());
  post_in_order(k, bytes);
  if (!link_) return *slot.inbox->get<Reply>();
  slot.arrived->acquire();
  return slot.reply;
}

void AspDriver::send_down_notice(WorkerId k) {
  slots_[k].push = Push{k, 0, 0.0};
  post_in_order(k, 0);
}

void AspDriver::post_in_order(WorkerId k, std::uint64_t bytes) {
  if (ctx_.links != nullptr) {
    ctx_.links->carry_route(ctx_.platform.workers[k], ctx_.platform.parameter_server, static_cast<double>(bytes));
  }
  if (link_) {
    link_->posted.push_back(AnalyticLink::Posted{now(), k, static_cast<double>(bytes)});
    // The server sleeps until the link's next event: a push joining before it changes every flow's share.
    if (now() + link_->spec.push_latency_s[k] < link_->next_event_s) link_->wake->notify_one();
    return;
  }
  if (push_comms_.empty()) push_comms_.resize(slots_.size());
  if (group_.empty()) {
    group_.push_back(k);
    // The workers that SimGrid wakes at this instant with k join the group meanwhile. Some come a few scheduling
    // rounds later (a down notice follows the availability actor's cancel, and its changes are simcalls apart):
    // wait until the group has not grown for three rounds in a row.
    for (int quiet = 0; quiet < 3;) {
      const std::size_t before = group_.size();
      sg4::this_actor::yield();
      quiet = group_.size() == before ? quiet + 1 : 0;
    }
    std::sort(group_.begin(), group_.end());
    group_sorted_ = true;
    group_next_ = 0;
    if (group_.front() != k) {
      slots_[group_.front()].turn->release();
      slots_[k].turn->acquire();
    }
  } else {
    if (group_sorted_) {
      // A late joiner (woken at this instant after the group was sorted) takes its place among those still to post.
      const auto first_waiting = group_.begin() + static_cast<std::ptrdiff_t>(group_next_) + 1;
      group_.insert(std::upper_bound(first_waiting, group_.end(), k), k);
    } else {
      group_.push_back(k);
    }
    slots_[k].turn->acquire();
  }
  take_turn(k, bytes);
  const sg4::CommPtr comm = std::move(push_comms_[k]);
  comm->wait();
}

void AspDriver::take_turn(WorkerId k, std::uint64_t bytes) {
  push_comms_[k] = server_inbox_->put_async(&slots_[k].push, bytes);
  ++group_next_;
  if (group_next_ < group_.size()) {
    slots_[group_[group_next_]].turn->release();
  } else {
    group_.clear();
    group_sorted_ = false;
    group_next_ = 0;
  }
}

void AspDriver::send_posted(Seconds t) {
  AnalyticLink& link = *link_;
  if (link.posted.empty()) return;
  std::sort(link.posted.begin(), link.posted.end());
  for (const AnalyticLink::Posted& p : link.posted) {
    link.sent.push_back(p.worker);
    link.push.add(p.worker, link.spec.worker_class[p.worker], p.bytes,
                  std::max(t, p.time_s + link.spec.push_latency_s[p.worker]));
  }
  link.posted.clear();
}

void AspDriver::apply_push(WorkerId k, std::vector<WorkerId>& replies) {
  Slot& slot = slots_[k];
  const Push& push = slot.push;
  slot.reply.staleness = staleness_.of(k, updates_);
  // Ringmaster drops a push too stale: the iteration counts, the parameters do not change.
  const bool applied = ctx_.scenario.workload.asp.applies(slot.reply.staleness);
  if (applied) {
    ++updates_;
    staleness_.applied_own(k);
  } else {
    ++dropped_;
  }
  log_.pushed(k, push.batch, slot.reply.staleness, applied);
  log_.push_cost(k, push.batch, push.compute_s, compute_joules(push), applied);
  slot.reply.update = updates_;
  slot.reply.outcome.reset();
  bool epoch_ended = false;
  bool barrier = false;  // pull: per-epoch: this push opens a barrier (the epoch count's, floor or ceil)
  if (!done_) {
    const Seconds t = now();
    // Virtual-time training: the push is computed on the parameters k pulled and applied now, at its arrival.
    if (ctx_.training != nullptr) {
      slot.reply.outcome = ctx_.training->asp_push(k, push.batch, slot.reply.staleness, push.compute_s);
    }
    Status st = ctx_.controller.report(controller::IterationDone{k, updates_, t, push.compute_s, push.batch});
    if (!st.is_ok()) fail(st);
    epoch_ended = progress_.add(push.batch, t);
    barrier = per_epoch_ && (ceil_epochs_ ? log_.ceil_crossed(progress_.samples()) : epoch_ended);
    if (epoch_ended) ctx_.availability.enter_epoch(progress_.epoch(), t);
    if (ctx_.training != nullptr) ctx_.training->after_update(updates_, progress_.epoch(), epoch_ended, t);
    if (progress_.done() || !status_.is_ok() || (ctx_.training != nullptr && ctx_.training->done())) {
      done_ = true;
      end_time_s_ = t;
      progress_.finish();
      wake_->notify_all();
    } else if (!barrier) {
      plan(t);  // pull: per-epoch decides at the epoch's barrier, once every live worker has pushed
    }
  }
  if (!schedule_.holds()) {
    fill_reply(k, /*pull=*/true);
    replies.push_back(k);
    return;
  }
  schedule_.pushed(k, barrier);
  slot.held_since_s = now();
  release_held(replies);
}

void AspDriver::hear_down(std::vector<WorkerId>& replies) { release_held(replies); }

void AspDriver::release_held(std::vector<WorkerId>& replies) {
  if (done_) {
    for (const WorkerId j : schedule_.release_all()) {
      fill_reply(j, /*pull=*/false);
      replies.push_back(j);
    }
    return;
  }
  bool barrier_opened = false;
  const std::vector<WorkerId> released =
      schedule_.release([this](WorkerId j) { return !ctx_.availability.is_down(j); }, barrier_opened);
  if (barrier_opened) {
    log_.barrier(progress_.epoch(), updates_, now());
    plan(now());
    // Every worker held at the barrier pulls with its reply, also one that SSP's bound still holds.
    for (WorkerId j = 0; j < slots_.size(); ++j) {
      if (schedule_.held(j)) barrier_pull_[j] = true;
    }
  }
  for (const WorkerId j : released) {
    fill_reply(j, !per_epoch_ || barrier_opened || barrier_pull_[j]);
    barrier_pull_[j] = false;
    replies.push_back(j);
  }
}

void AspDriver::fill_reply(WorkerId k, bool pull) {
  Slot& slot = slots_[k];
  slot.reply.batch = batch_for(k);
  slot.reply.held_s = schedule_.holds() ? now() - slot.held_since_s : 0.0;
  pulls_[k] = pull;
  if (!pull) return;
  staleness_.pulled(k, updates_);
  log_.pulled(k);
  if (ctx_.training != nullptr) ctx_.training->asp_pull(k);
}

void AspDriver::charge_reply(WorkerId k) {
  if (ctx_.links == nullptr) return;
  ctx_.links->carry_route(ctx_.platform.parameter_server, ctx_.platform.workers[k], static_cast<double>(reply_bytes(k)));
}

std::uint64_t AspDriver::reply_bytes(WorkerId k) const {
  return pulls_[k] ? static_cast<std::uint64_t>(ctx_.cost.gradient_bytes()) : kReplyHeaderBytes;
}

std::optional<double> AspDriver::compute_joules(const Push& push) const {
  const run::EnergyMeter* meter = ctx_.recorder.energy_meter();
  if (meter == nullptr) return std::nullopt;
  // The worker's busy power (its availability's share) at the computation's start, as EnergyMeter charges compute.
  return meter->step_power(push.worker, push.batch, push.start_s).busy_w * push.compute_s;
}

void AspDriver::plan(Seconds t) {
  // The controller's epoch (its every-epoch trigger) is the barrier's count: with epochs: ceil, 1 at the first.
  const std::int64_t epoch = ceil_epochs_ ? log_.ceil_epoch() : progress_.epoch();
  auto plan = ctx_.controller.plan_next(controller::DecisionPoint{updates_, epoch, t});
  if (plan) {
    ctx_.recorder.plan(*plan, progress_.epoch());
  } else {
    fail(plan.status());
  }
}

void AspDriver::server() {
  sg4::Mailbox* const inbox = server_inbox_;
  // Pushes start as soon as workers post them (gradients travel concurrently) instead of one at a time.
  inbox->set_receiver(sg4::Actor::self());
  while (true) {
    const Push* push = inbox->get<Push>();
    replies_.clear();
    if (push->batch == 0) {
      hear_down(replies_);
    } else {
      apply_push(push->worker, replies_);
    }
    for (const WorkerId j : replies_) {
      charge_reply(j);
      slots_[j].inbox->put_init(&slots_[j].reply, reply_bytes(j))->detach();
    }
  }
}

void AspDriver::link_server() {
  AnalyticLink& link = *link_;
  std::unique_lock<sg4::Mutex> lock(*link.mutex);
  while (true) {
    send_posted(now());
    link.next_event_s = std::min(link.push.next_event_s(), link.pull.next_event_s());
    if (link.next_event_s == std::numeric_limits<double>::infinity()) {
      link.wake->wait(lock);
      serve_link_events(now());
    } else {
      // SimGrid sleeps for the event's time minus now, which may land an ulp before it: the event is due anyway.
      const bool due = link.wake->wait_until(lock, link.next_event_s) == std::cv_status::timeout;
      serve_link_events(due ? std::max(now(), link.next_event_s) : now());
    }
  }
}

void AspDriver::serve_link_events(Seconds t) {
  AnalyticLink& link = *link_;
  send_posted(t);
  link.finished.clear();
  link.pull.advance(t, link.finished);
  // Pulls that end together wake their workers last started first, as SimGrid wakes the receivers of flows that end
  // at one instant: the same tie order keeps the runs' update order closer to the flows' (a tie broken the other way
  // is as valid, but reorders the updates that follow).
  for (auto it = link.finished.rbegin(); it != link.finished.rend(); ++it) {
    slots_[static_cast<WorkerId>(*it)].arrived->release();
  }
  link.finished.clear();
  link.push.advance(t, link.finished);
  for (const std::int64_t k : link.finished) slots_[static_cast<WorkerId>(k)].at_server = true;
  // As the flows' server receives from its mailbox: in the order the pushes were sent, each once it has arrived.
  while (!link.sent.empty() && slots_[link.sent.front()].at_server) {
    const WorkerId k = link.sent.front();
    link.sent.pop_front();
    slots_[k].at_server = false;
    replies_.clear();
    if (slots_[k].push.batch == 0) {
      hear_down(replies_);
    } else {
      apply_push(k, replies_);
    }
    for (const WorkerId j : replies_) {
      charge_reply(j);
      link.pull.add(j, link.spec.worker_class[j], static_cast<double>(reply_bytes(j)), t + link.spec.pull_latency_s[j]);
    }
  }
}

run::RunSummary AspDriver::summary() const {
  run::RunSummary s;
  s.mode = "asp";
  s.workers = static_cast<std::int64_t>(slots_.size());
  s.iterations = progress_.iterations();
  s.epochs = progress_.epoch();
  s.total_time_s = end_time_s_;
  const auto records = ctx_.recorder.iteration_records();
  s.mean_iteration_s = records > 0 ? ctx_.recorder.busy_s() / static_cast<double>(records) : 0.0;
  s.epoch_time_s = progress_.epoch_time_s();
  s.extra["samples"] = static_cast<double>(progress_.samples());
  if (ctx_.scenario.workload.asp.rule == scenarios::AspRule::kRingmaster) {
    s.extra["dropped_pushes"] = static_cast<double>(dropped_);
    log_.fill_dropped(s);
  }
  if (per_epoch_) log_.fill(s);
  return s;
}

Status AspDriver::write_files() const {
  return per_epoch_ ? ctx_.recorder.write_file("barriers.csv", log_.barriers_csv()) : Status::ok();
}

}  // namespace omnilearn::sim
