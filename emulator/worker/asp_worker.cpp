// ASP on the testbed (LibTorch). n worker processes (Gloo ranks 0..n-1, each in its cgroup) and one parameter
// server process (rank n, outside the workers' cgroups; it also serves the TCPStore). Messages are c10d Gloo
// point-to-point send/recv of flat float tensors (no extra dependency, the same transport as BSP):
//   push  (worker -> server, tag 0): [gradient or model | compute_s, batch, start_s, loss, accuracy]
//   reply (server -> worker, tag 1): [weights | batch, staleness, stop reason (0: none), update, epoch, pulled,
//                                     held_s]
// The server takes pushes in arrival order (recvAnysource), applies each at once by workload.asp (the default: w -=
// η_k g_k with η_k = η b_k / b_ref when lr_scaling is on, b_ref = B / n, SGD momentum as configured; or a rule of
// asp_update_rule.h; or, update: model-overwrite, the pushed model replaces the server's), counts staleness
// (other workers' updates applied since that worker last pulled), runs the Controller in ASP mode for per-worker
// batches and answers with the new weights and batch: at once, or when run::AspSchedule lets the worker go on
// (SSP's bound, the epoch barrier of pull: per-epoch, whose replies between barriers carry weights the worker does
// not load). A worker with its own copy (model-overwrite, per-epoch) takes a local SGD step on it after each
// gradient. A worker with batch 0 (down) sends empty pushes every 50 ms.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "omnilearn/controller/controller.h"
#include "omnilearn/emulator/data_partition.h"
#include "omnilearn/emulator/global_sampler.h"
#include "omnilearn/emulator/thread_groups.h"
#include "omnilearn/run/asp_schedule.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/run/records.h"
#include "omnilearn/run/stop_rule.h"
#include "asp_update_rule.h"
#include "rendezvous.h"
#include "torch_parts.h"
#include "worker_io.h"
#include "worker_options.h"

namespace omnilearn::emulator::worker {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPushTag = 0;
constexpr int kReplyTag = 1;
// Tail fields after the flat parameters.
enum Push : std::int64_t { kComputeS, kBatch, kStartS, kLoss, kAccuracy, kPushFields };
enum Reply : std::int64_t { kReplyBatch, kStaleness, kStop, kUpdate, kEpoch, kPulled, kHeldS, kReplyFields };

int fail(const std::string& who, const std::string& msg) {
  std::cerr << "omnilearn-emulate-worker " << who << ": " << msg << "\n";
  return 1;
}

c10::intrusive_ptr<c10d::ProcessGroupGloo> connect(const WorkerOptions& o) {
  const std::vector<pid_t> before = own_thread_ids();
  auto store = open_store(o, o.rank, o.config.world + 1, /*serves=*/o.server);
  auto opts = c10d::ProcessGroupGloo::Options::create(gloo_timeout(o));
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, o.rank, o.config.world + 1, opts);
  // Gloo's and the store's threads run outside the CPU quota (emulator.throttle: compute).
  const Status moved = move_new_threads(before, o.comm_thread_files);
  if (!moved.is_ok()) throw std::runtime_error(moved.message());
  return pg;
}

std::int64_t count_params(const std::vector<torch::Tensor>& params) {
  std::int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

// Copies parameters (or their gradients) into / out of the front of a flat buffer.
void flatten_into(const std::vector<torch::Tensor>& ts, torch::Tensor& buffer, bool grads) {
  torch::NoGradGuard ng;
  std::int64_t at = 0;
  for (const auto& p : ts) {
    auto dst = buffer.narrow(0, at, p.numel());
    if (!grads) dst.copy_(p.detach().reshape(-1));
    else if (p.grad().defined()) dst.copy_(p.grad().reshape(-1));
    else dst.zero_();
    at += p.numel();
  }
}
void unflatten_from(std::vector<torch::Tensor>& ts, const torch::Tensor& buffer, bool grads) {
  torch::NoGradGuard ng;
  std::int64_t at = 0;
  for (auto& p : ts) {
    auto src = buffer.narrow(0, at, p.numel()).view_as(p);
    if (!grads) {
      p.copy_(src);
    } else {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      p.mutable_grad().copy_(src);
    }
    at += p.numel();
  }
}

// What both ASP roles start with: Torch's threads and seed, their split of the data (a worker's training split, the
// server's test split), the network and its trainable tensors, and the Gloo group.
Status set_up(const WorkerOptions& o, bool train, torch::Device device, Split& data, Net& net,
              std::vector<torch::Tensor>& params, std::int64_t& n_params,
              c10::intrusive_ptr<c10d::ProcessGroupGloo>& pg) {
  const TestbedConfig& c = o.config;
  at::set_num_threads(o.threads);
  auto split = load_split(c.settings, c.data_dir, train, train ? c.dataset_samples : c.settings.eval_samples);
  if (!split) return split.status();
  data = std::move(split).value();
  torch::manual_seed(c.seed);
  auto made = make_net(c.settings, device);
  if (!made) return made.status();
  net = std::move(made).value();
  params = net.parameters;
  n_params = count_params(params);
  try {
    pg = connect(o);
  } catch (const std::exception& e) {
    return Status::internal(std::string("rendezvous through ").append(c.store_file).append(" failed: ").append(e.what()));
  }
  return Status::ok();
}

Clock::time_point start_of(const TestbedConfig& c) {
  return Clock::time_point{std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(c.t0_ns))};
}

// One ASP worker: pulls weights and its batch, computes, pushes the gradient; reports its rows.
class AspWorker {
 public:
  explicit AspWorker(const WorkerOptions& o)
      : o_(o),
        c_(o.config),
        who_("asp worker " + std::to_string(o.rank)),
        t0_(start_of(o.config)),
        reporter_(o.out_fd),
        own_copy_(c_.asp.update == scenarios::AspUpdate::kModelOverwrite ||
                  c_.asp.pull == scenarios::AspPull::kPerEpoch),
        local_sgd_(c_.settings.momentum),
        b_ref_(std::max(1.0, static_cast<double>(c_.global_batch) / static_cast<double>(c_.world))) {}

  int run() {
    auto device = torch_device(c_.settings.device);
    if (!device) return fail(who_, device.status().message());
    if (Status st = set_up(o_, /*train=*/true, *device, train_, net_, params_, n_params_, pg_); !st.is_ok()) {
      return fail(who_, st.message());
    }
    // Each worker walks its own seeded permutation of the samples it holds (workload.partition: all of them, or its
    // shards); the server counts epochs by samples applied.
    const std::uint64_t seed = c_.seed + 7919u * static_cast<std::uint64_t>(o_.rank + 1);
    const torch::Tensor labels = train_.labels.to(torch::kCPU, torch::kInt64).contiguous();
    std::vector<std::int64_t> mine = partition_samples(
        std::span<const std::int64_t>(labels.data_ptr<std::int64_t>(), static_cast<std::size_t>(labels.numel())),
        static_cast<std::size_t>(c_.world), static_cast<std::size_t>(o_.rank), c_.partition);
    GlobalSampler sampler =
        mine.empty() ? GlobalSampler(train_.images.size(0), seed) : GlobalSampler(std::move(mine), seed);
    std::vector<torch::Tensor> reply{torch::zeros({n_params_ + kReplyFields}, torch::kFloat32)};
    std::vector<torch::Tensor> push{torch::zeros({n_params_ + kPushFields}, torch::kFloat32)};
    pg_->recv(reply, c_.world, kReplyTag)->wait();  // the initial pull
    float stop = 0.0f;
    while ((stop = reply[0].accessor<float, 1>()[n_params_ + kStop]) <= 0.0f) step(sampler, reply, push);
    // The server's rule stopped the run: its reason.
    const std::optional<run::StopReason> reason = run::stop_reason_from_code(std::lround(stop));
    if (!reason) return fail(who_, "the server's stop code " + std::to_string(stop) + " names no stop reason");
    reporter_.send(DoneRecord{*reason});
    return 0;
  }

 private:
  double since_t0() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  // One pull-compute-push round on the weights of `reply` (when it carries them to load; else on this worker's own
  // copy); a worker with batch 0 (down) asks again in 50 ms.
  void step(GlobalSampler& sampler, std::vector<torch::Tensor>& reply, std::vector<torch::Tensor>& push) {
    if (reply[0].accessor<float, 1>()[n_params_ + kPulled] > 0.0f) unflatten_from(params_, reply[0], /*grads=*/false);
    const auto batch = static_cast<BatchSize>(reply[0].accessor<float, 1>()[n_params_ + kReplyBatch]);
    const double start_s = since_t0();
    auto p = push[0].accessor<float, 1>();
    double compute_s = 0.0;
    StepResult result;
    if (batch > 0) {
      const std::vector<BatchSize> mine{batch};
      const StepAssignment a = sampler.next(mine);
      const BatchSize got = a.batch[0];  // the end of this worker's permutation may shrink it
      const auto idx_span = sampler.indices(a, 0);
      const auto c0 = Clock::now();
      auto idx = torch::from_blob(const_cast<std::int64_t*>(idx_span.data()), {got}, torch::kInt64);
      const double cpu_target_s = c_.settings.sample_cost_s * static_cast<double>(got);
      result = forward_backward(net_, train_.images.index_select(0, idx), train_.labels.index_select(0, idx), cpu_target_s);
      note_cost_overrun(result, cpu_target_s, who_, warned_cost_);
      compute_s = std::chrono::duration<double>(Clock::now() - c0).count();
      flatten_into(params_, push[0], /*grads=*/true);
      if (own_copy_) local_step(got, push[0]);
      p[n_params_ + kBatch] = static_cast<float>(got);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      p[n_params_ + kBatch] = 0.0f;
    }
    p[n_params_ + kComputeS] = static_cast<float>(compute_s);
    p[n_params_ + kStartS] = static_cast<float>(start_s);
    p[n_params_ + kLoss] = static_cast<float>(result.loss);
    p[n_params_ + kAccuracy] = static_cast<float>(result.accuracy);
    const auto m0 = Clock::now();
    pg_->send(push, c_.world, kPushTag)->wait();
    pg_->recv(reply, c_.world, kReplyTag)->wait();
    const double round_trip_s = std::chrono::duration<double>(Clock::now() - m0).count();
    if (batch == 0) return;
    auto q = reply[0].accessor<float, 1>();
    const double held_s = q[n_params_ + kHeldS];
    const double comm_s = round_trip_s - held_s;
    run::IterationRecord rec;
    rec.worker = static_cast<WorkerId>(o_.rank);
    rec.step = static_cast<std::int64_t>(q[n_params_ + kUpdate]);
    rec.epoch = static_cast<std::int64_t>(q[n_params_ + kEpoch]);
    rec.start_s = start_s, rec.compute_s = compute_s, rec.comm_s = comm_s, rec.wait_s = held_s;
    rec.batch = static_cast<BatchSize>(p[n_params_ + kBatch]);
    rec.loss = result.loss, rec.accuracy = result.accuracy;
    rec.staleness = static_cast<std::int64_t>(q[n_params_ + kStaleness]);
    reporter_.send(rec);
  }

  // The local SGD step on this worker's own copy, whose gradient is at the front of `push`; then what it pushes:
  // its model (update: model-overwrite) or the gradient, left in place.
  void local_step(BatchSize batch, torch::Tensor& push) {
    torch::Tensor w = torch::empty({n_params_}, torch::kFloat32);
    flatten_into(params_, w, /*grads=*/false);
    local_sgd_.step(w, push.narrow(0, 0, n_params_), asp_step_size(c_.settings, batch, b_ref_, local_sgd_.steps() + 1));
    unflatten_from(params_, w, /*grads=*/false);
    if (c_.asp.update == scenarios::AspUpdate::kModelOverwrite) push.narrow(0, 0, n_params_).copy_(w);
  }

  const WorkerOptions& o_;
  const TestbedConfig& c_;
  const std::string who_;
  const Clock::time_point t0_;
  Reporter reporter_;
  const bool own_copy_;  // update: model-overwrite or pull: per-epoch: it trains on its own copy between pulls
  LocalSgd local_sgd_;
  const double b_ref_;
  Split train_;
  Net net_;
  std::vector<torch::Tensor> params_;
  std::int64_t n_params_ = 0;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  bool warned_cost_ = false;  // the emulated cost was below this host's own cost (said once)
};

// The parameter server: applies each push at once, counts staleness, runs the controller, evaluates, and decides
// when to stop.
class ParameterServer {
 public:
  explicit ParameterServer(const WorkerOptions& o)
      : o_(o), c_(o.config), s_(o.config.settings), world_(static_cast<std::size_t>(o.config.world)),
        t0_(start_of(o.config)), reporter_(o.out_fd), notices_(o.in_fd), staleness_counts_(world_),
        stopped_(world_, false),
        schedule_(o.config.asp, world_),
        per_epoch_(o.config.asp.pull == scenarios::AspPull::kPerEpoch), idle_(world_, false),
        held_staleness_(world_, 0), held_since_s_(world_, 0.0), barrier_pull_(world_, false),
        stop_(stop_limits(o.config)) {}

  int run() {
    if (Status st = start(); !st.is_ok()) return fail(who_, st.message());
    try {
      for (std::size_t k = 0; k < world_; ++k) send_reply(k, 0, /*pull=*/true);
      while (std::count(stopped_.begin(), stopped_.end(), true) < static_cast<std::ptrdiff_t>(world_)) {
        if (Status st = serve_one(); !st.is_ok()) return fail(who_, st.message());
      }
    } catch (const std::exception& e) {
      return fail(who_, std::string("failed after update ").append(std::to_string(updates_)).append(": ").append(e.what()));
    }
    report_end();
    return 0;
  }

 private:
  double since_t0() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  double training_s() const { return since_t0() - train_start_s_ - eval_s_; }  // evaluations do not count

  // The test split, the network, the rendezvous, the controller and the optimiser; training starts here.
  Status start() {
    OMNI_RETURN_IF_ERROR(set_up(o_, /*train=*/false, torch::kCPU, test_, net_, params_, n_params_, pg_));
    auto ctl = run::make_controller(c_.controller);
    if (!ctl) return ctl.status();
    ctl_.emplace(std::move(ctl).value());
    const controller::Plan initial = ctl_->current_plan();
    auto start_plan = run::apply_start_levels(*ctl_, c_.initial_availability);  // workers down from the start
    if (!start_plan) return start_plan.status();
    sgd_.emplace(params_, torch::optim::SGDOptions(s_.learning_rate).momentum(s_.momentum));
    b_ref_ = std::max(1.0, static_cast<double>(c_.global_batch) / static_cast<double>(world_));
    rule_ = make_asp_server_rule(c_.asp, world_, b_ref_);
    reply_ = {torch::zeros({n_params_ + kReplyFields}, torch::kFloat32)};
    push_ = {torch::zeros({n_params_ + kPushFields}, torch::kFloat32)};
    train_start_s_ = since_t0();
    reporter_.send(ExtraRecord{"training_start_s", train_start_s_});
    reporter_.send(run::plan_record(initial, 0));
    if (start_plan->decided) reporter_.send(run::plan_record(*start_plan, 0));
    return Status::ok();
  }

  // Takes the next push (in arrival order) and answers it.
  Status serve_one() {
    auto work = pg_->recvAnysource(push_, kPushTag);
    work->wait();
    const auto k = static_cast<std::size_t>(work->sourceRank());
    auto p = push_[0].accessor<float, 1>();
    const auto batch = static_cast<BatchSize>(p[n_params_ + kBatch]);
    std::int64_t staleness = 0;
    const double now_s = since_t0();
    bool barrier = false;  // pull: per-epoch: this push opens the epoch barrier (workload.asp.epochs' count)
    if (batch > 0 && !stop_.stopped()) {
      if (idle_[k] && schedule_.holds()) schedule_.rejoin(k, live());
      idle_[k] = false;
      staleness = staleness_counts_.of(static_cast<WorkerId>(k), updates_);
      const double compute_s = p[n_params_ + kComputeS];
      apply(k, batch, staleness, compute_s);
      OMNI_RETURN_IF_ERROR(decide_after_update(k, batch, compute_s, now_s));
      barrier = barrier_crossed_;
    } else if (batch == 0) {
      idle_[k] = true;
      hear_availability(now_s);
      auto plan = ctl_->plan_next(controller::DecisionPoint{updates_, barrier_epoch_, now_s});
      if (plan && plan->decided) reporter_.send(run::plan_record(*plan, epoch_));
      if (!stop_.stopped()) stop_.elapsed(training_s());
    }
    if (!schedule_.holds() || batch == 0 || stop_.stopped()) {
      send_reply(k, staleness, /*pull=*/!per_epoch_ || batch == 0);
    } else {
      schedule_.pushed(k, barrier);
      held_staleness_[k] = staleness;
      held_since_s_[k] = now_s;
    }
    return release_held();
  }

  run::AspSchedule::LiveFn live() const {
    return [this](WorkerId j) { return ctl_->is_live(j); };
  }

  // The held replies that may go now (all of them once the run stops); at the epoch barrier's opening, the epoch's
  // batch decision first, and the weights in each.
  Status release_held() {
    if (!schedule_.holds()) return Status::ok();
    if (stop_.stopped()) {
      for (const WorkerId j : schedule_.release_all()) {
        send_reply(j, held_staleness_[j], /*pull=*/false, since_t0() - held_since_s_[j]);
      }
      return Status::ok();
    }
    bool opened = false;
    const std::vector<WorkerId> released = schedule_.release(live(), opened);
    if (opened) {
      auto plan = ctl_->plan_next(controller::DecisionPoint{updates_, barrier_epoch_, since_t0()});
      if (!plan) return plan.status();
      if (plan->decided) reporter_.send(run::plan_record(*plan, epoch_));
      for (WorkerId j = 0; j < world_; ++j) barrier_pull_[j] = schedule_.held(j);
    }
    for (const WorkerId j : released) {
      send_reply(j, held_staleness_[j], !per_epoch_ || opened || barrier_pull_[j], since_t0() - held_since_s_[j]);
      barrier_pull_[j] = false;
    }
    return Status::ok();
  }

  // The pushed model replaces the server's (update: model-overwrite), or the gradient goes through the rule:
  // w -= η_k g_k (η_k = η b_k / b_ref with lr_scaling, or η sqrt(b_k / b_ref) by its rule; times the warm-up ramp;
  // times the rule's factor), unless the rule drops it (the samples count, the update does not).
  void apply(std::size_t k, BatchSize batch, std::int64_t staleness, double compute_s) {
    const auto a0 = Clock::now();
    bool applied = true;
    if (c_.asp.update == scenarios::AspUpdate::kModelOverwrite) {
      overwrite_parameters(params_, push_[0]);
    } else {
      unflatten_from(params_, push_[0], /*grads=*/true);
      applied = apply_gradient(*rule_, *sgd_, params_, AspPush{static_cast<WorkerId>(k), batch, staleness, compute_s},
                               asp_step_size(s_, batch, b_ref_, updates_ + 1));
    }
    if (applied) {
      ++updates_;
      staleness_counts_.applied_own(static_cast<WorkerId>(k));
    } else {
      ++dropped_;
    }
    samples_ += batch;
    apply_s_ += std::chrono::duration<double>(Clock::now() - a0).count();
  }

  void hear_availability(double now_s) {
    for (const AvailabilityNotice& n : notices_.poll()) {
      if (n.worker < world_) (void)ctl_->report(controller::AvailabilityChange{n.worker, now_s, n.fraction});
    }
  }

  // The controller hears of the update; then the stopping rules and the evaluation schedule.
  Status decide_after_update(std::size_t k, BatchSize batch, double compute_s, double now_s) {
    const auto d0 = Clock::now();
    (void)ctl_->report(controller::IterationDone{static_cast<WorkerId>(k), updates_, now_s, compute_s, batch});
    hear_availability(now_s);
    const std::int64_t new_epoch = samples_ / c_.dataset_samples;
    const bool epoch_ended = new_epoch > epoch_;
    epoch_ = new_epoch;
    // The controller's epoch (its every-epoch trigger) is the barrier's count: with epochs: ceil, 1 after the first
    // push, as the simulator's ASP driver counts it.
    const std::int64_t count = run::barrier_epoch(c_.asp_epochs, samples_, c_.dataset_samples);
    barrier_crossed_ = per_epoch_ && count > barrier_epoch_;
    barrier_epoch_ = count;
    // pull: per-epoch decides at the epoch's barrier (release_held), once every live worker has pushed.
    if (!barrier_crossed_) {
      auto plan = ctl_->plan_next(controller::DecisionPoint{updates_, barrier_epoch_, now_s});
      if (!plan) return plan.status();
      if (plan->decided) reporter_.send(run::plan_record(*plan, epoch_));
    }
    decision_s_ += std::chrono::duration<double>(Clock::now() - d0).count();
    stop_.progress(updates_, samples_);
    stop_.elapsed(training_s());
    const bool due = (s_.eval_every > 0 ? updates_ % s_.eval_every == 0 : epoch_ended) && updates_ != last_eval_update_;
    if (!stop_.stopped() && due) run_evaluation();
    return Status::ok();
  }

  // Answers worker k's push of `staleness`, held `held_s`; with `pull`, the reply carries the server's weights for k
  // to load.
  void send_reply(std::size_t k, std::int64_t staleness, bool pull, double held_s = 0.0) {
    if (pull) flatten_into(params_, reply_[0], /*grads=*/false);
    auto r = reply_[0].accessor<float, 1>();
    r[n_params_ + kPulled] = pull ? 1.0f : 0.0f;
    r[n_params_ + kHeldS] = static_cast<float>(held_s);
    r[n_params_ + kReplyBatch] = static_cast<float>(ctl_->current_plan().batch[k]);
    r[n_params_ + kStaleness] = static_cast<float>(staleness);
    r[n_params_ + kStop] = static_cast<float>(run::stop_reason_code(stop_.reason()));
    r[n_params_ + kUpdate] = static_cast<float>(updates_);
    r[n_params_ + kEpoch] = static_cast<float>(epoch_);
    pg_->send(reply_, static_cast<int>(k), kReplyTag)->wait();
    if (pull) {
      staleness_counts_.pulled(static_cast<WorkerId>(k), updates_);
      rule_->pulled(static_cast<WorkerId>(k), params_);
    }
    if (stop_.stopped()) stopped_[k] = true;
  }

  void run_evaluation() {
    const auto e0 = Clock::now();
    const Evaluation ev = evaluate(net_, test_);
    const double at_s = since_t0();
    eval_s_ += std::chrono::duration<double>(Clock::now() - e0).count();
    reporter_.send(run::EvaluationRecord{at_s, updates_, epoch_, ev.loss, ev.accuracy});
    last_eval_update_ = updates_;
    if (stop_.evaluation(ev.accuracy) == run::StopReason::kTarget && !time_to_target_) {
      time_to_target_ = training_s();
      updates_to_target_ = updates_;
    }
  }

  void report_end() {
    if (last_eval_update_ != updates_) run_evaluation();
    const double train_s = training_s();
    if (c_.asp.rule == scenarios::AspRule::kRingmaster) {
      reporter_.send(ExtraRecord{"dropped_pushes", static_cast<double>(dropped_)});
    }
    report_totals(reporter_, {decision_s_, train_s, eval_s_, n_params_, time_to_target_, updates_to_target_, apply_s_, updates_});
    reporter_.send(DoneRecord{stop_.reason()});
  }

  const WorkerOptions& o_;
  const TestbedConfig& c_;
  const scenarios::EmulatorSpec& s_;
  const std::string who_ = "parameter server";
  const std::size_t world_;
  const Clock::time_point t0_;
  Reporter reporter_;
  NoticeReader notices_;
  Split test_;
  Net net_;
  std::vector<torch::Tensor> params_;
  std::int64_t n_params_ = 0;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  std::optional<controller::Controller> ctl_;
  std::optional<torch::optim::SGD> sgd_;
  std::vector<torch::Tensor> reply_, push_;
  double b_ref_ = 1.0;
  std::int64_t updates_ = 0, samples_ = 0, epoch_ = 0, last_eval_update_ = -1;
  std::int64_t barrier_epoch_ = 0;  // workload.asp.epochs' count after the last push (run::barrier_epoch)
  bool barrier_crossed_ = false;    // the last applied push raised it (pull: per-epoch: the barrier opens)
  run::AspStaleness staleness_counts_;          // each worker's last pull and own updates since
  std::vector<bool> stopped_;
  run::AspSchedule schedule_;                  // when a reply waits (SSP, the epoch barrier)
  std::unique_ptr<AspServerRule> rule_;        // the server's rule for a pushed gradient
  const bool per_epoch_;                       // pull: per-epoch
  std::vector<bool> idle_;                     // the worker's last push was empty (it is down)
  std::vector<std::int64_t> held_staleness_;   // the staleness of the push whose reply is held
  std::vector<double> held_since_s_;
  std::vector<bool> barrier_pull_;             // held when the epoch barrier opened: its reply carries the weights
  std::int64_t dropped_ = 0;                   // pushes the rule dropped (Ringmaster)
  double train_start_s_ = 0.0, eval_s_ = 0.0, apply_s_ = 0.0, decision_s_ = 0.0;
  std::optional<double> time_to_target_;
  std::int64_t updates_to_target_ = -1;
  run::StopRule stop_;  // the run's: the workers learn its reason from the replies
};

}  // namespace

int run_asp_worker(const WorkerOptions& options) {
  try {
    return AspWorker(options).run();
  } catch (const std::exception& e) {
    return fail("asp worker " + std::to_string(options.rank), e.what());
  }
}

int run_parameter_server(const WorkerOptions& options) {
  try {
    return ParameterServer(options).run();
  } catch (const std::exception& e) {
    return fail("parameter server", e.what());
  }
}

}  // namespace omnilearn::emulator::worker
