#include "asp_driver.h"

#include <mutex>
#include <string>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;

Seconds now() { return sg4::Engine::get_clock(); }

sg4::Mailbox* server_mailbox() { return sg4::Mailbox::by_name("parameter-server"); }
sg4::Mailbox* worker_mailbox(WorkerId k) { return sg4::Mailbox::by_name("worker-" + std::to_string(k)); }

}  // namespace

AspDriver::AspDriver(RunContext& context)
    : ctx_(context),
      progress_(context.scenario, context.options.progress, context.options.stop_requested),
      slots_(context.platform.workers.size()) {}

void AspDriver::start() {
  mutex_ = sg4::Mutex::create();
  wake_ = sg4::ConditionVariable::create();
  for (WorkerId k = 0; k < slots_.size(); ++k) {
    slots_[k].inbox = worker_mailbox(k);  // looked up once: by name it costs a string and a map search per update
    sg4::Actor::create("worker-" + std::to_string(k), ctx_.platform.workers[k], [this, k] { worker(k); });
  }
  // A daemon: the run ends when every worker has returned; the server is never blocked on a finished run.
  sg4::Actor::create("parameter-server", ctx_.platform.parameter_server, [this] { server(); })->daemonize();
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
  sg4::Mailbox* const inbox = slot.inbox;
  sg4::Mailbox* const server = server_mailbox();
  while (!done_) {
    if (ctx_.availability.is_down(k)) {
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      ++waiting_;
      wake_->wait(lock, [&] { return done_ || !ctx_.availability.is_down(k); });
      --waiting_;
      batch = batch_for(k);
      if (ctx_.training != nullptr) {
        // Virtual-time training: as the testbed's worker, which keeps pulling while down (batch 0), it returns with
        // the server's current parameters, and its next push's staleness counts from now.
        slot.pulled = updates_;
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
    slot.push = Push{k, batch, t1 - t0};
    server->put(&slot.push, static_cast<std::uint64_t>(ctx_.cost.gradient_bytes()));
    const Reply* reply = inbox->get<Reply>();
    const Seconds t2 = now();
    run::IterationRecord r;
    r.worker = k;
    r.step = reply->update;
    r.epoch = epoch;
    r.start_s = t0;
    r.compute_s = t1 - t0;
    r.comm_s = t2 - t1;
    r.batch = batch;
    r.staleness = reply->staleness;
    if (reply->outcome) r.loss = reply->outcome->loss, r.accuracy = reply->outcome->accuracy;
    ctx_.recorder.iteration(r);
    batch = reply->batch;
  }
}

void AspDriver::server() {
  sg4::Mailbox* const inbox = server_mailbox();
  // Pushes start as soon as workers post them (gradients travel concurrently) instead of one at a time.
  inbox->set_receiver(sg4::Actor::self());
  while (true) {
    const Push* push = inbox->get<Push>();
    const WorkerId k = push->worker;
    Slot& slot = slots_[k];
    slot.reply.staleness = updates_ - slot.pulled;
    ++updates_;
    slot.reply.update = updates_;
    slot.reply.outcome.reset();
    if (!done_) {
      const Seconds t = now();
      // Virtual-time training: the push is computed on the parameters k pulled and applied now, at its arrival.
      if (ctx_.training != nullptr) {
        slot.reply.outcome = ctx_.training->asp_push(k, push->batch, slot.reply.staleness);
      }
      Status st = ctx_.controller.report(controller::IterationDone{k, updates_, t, push->compute_s, push->batch});
      if (!st.is_ok()) fail(st);
      const bool epoch_ended = progress_.add(push->batch, t);
      if (epoch_ended) ctx_.availability.enter_epoch(progress_.epoch(), t);
      if (ctx_.training != nullptr) ctx_.training->after_update(updates_, progress_.epoch(), epoch_ended, t);
      if (progress_.done() || !status_.is_ok() || (ctx_.training != nullptr && ctx_.training->done())) {
        done_ = true;
        end_time_s_ = t;
        progress_.finish();
        wake_->notify_all();
      } else {
        auto plan = ctx_.controller.plan_next(controller::DecisionPoint{updates_, progress_.epoch(), t});
        if (plan) {
          ctx_.recorder.plan(*plan, progress_.epoch());
        } else {
          fail(plan.status());
        }
      }
    }
    slot.reply.batch = batch_for(k);
    slot.pulled = updates_;
    if (ctx_.training != nullptr) ctx_.training->asp_pull(k);
    slot.inbox->put_init(&slot.reply, static_cast<std::uint64_t>(ctx_.cost.gradient_bytes()))->detach();
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
  return s;
}

}  // namespace omnilearn::sim
