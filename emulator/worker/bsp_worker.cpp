// The BSP worker (LibTorch; data, networks and the compute step are in torch_parts.h). c10d TCPStore (on
// --store-host) + ProcessGroupGloo (bound to --bind; both 127.0.0.1 on one host), one flattened SUM all-reduce per
// step that also carries every worker's measured compute time and rank 0's availability notices and stop reason, so
// every rank runs an identical Controller and stops with the same reason.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "omnilearn/controller/controller.h"
#include "omnilearn/emulator/global_sampler.h"
#include "omnilearn/emulator/thread_groups.h"
#include "omnilearn/emulator/worker_protocol.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/run/records.h"
#include "omnilearn/run/stop_rule.h"
#include "rendezvous.h"
#include "torch_parts.h"
#include "worker_io.h"
#include "worker_options.h"

namespace omnilearn::emulator::worker {
namespace {

using Clock = std::chrono::steady_clock;

int fail(const std::string& msg, int rank) {
  std::cerr << "omnilearn-emulate-worker " << rank << ": " << msg << "\n";
  return 1;
}

// One BSP worker process: rendezvous, then steps (compute, one all-reduce, decide), evaluations on rank 0, and the
// run's closing numbers. Every rank feeds the same all-reduced facts to its own Controller, so every rank applies
// the same plan.
class BspWorker {
 public:
  explicit BspWorker(const WorkerOptions& o)
      : o_(o), c_(o.config), s_(o.config.settings), rank_(o.rank), world_(static_cast<std::size_t>(o.config.world)),
        t0_(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(o.config.t0_ns))),
        reporter_(o.out_fd), notices_(o.rank == 0 ? o.in_fd : -1), stop_(stop_limits(o.config)) {}

  int run() {
    if (Status st = load(); !st.is_ok()) return fail(st.message(), rank_);
    if (Status st = rendezvous(); !st.is_ok()) return fail(st.message(), rank_);
    if (Status st = start_training(); !st.is_ok()) return fail(st.message(), rank_);
    try {
      if (Status st = train(); !st.is_ok()) return fail(st.message(), rank_);
    } catch (const std::exception& e) {
      return fail(std::string("training failed at step ").append(std::to_string(step_)).append(": ").append(e.what()),
                  rank_);
    }
    report_end();
    return 0;
  }

 private:
  // What one step computed on this worker, and what the all-reduce told every worker.
  struct StepFacts {
    StepAssignment a;
    BatchSize total = 0, mine = 0;
    double start_s = 0.0, compute_s = 0.0, comm_total = 0.0, loss = 0.0, accuracy = 0.0;
    torch::Tensor buffer;
  };

  double since_t0() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  // The training split (and rank 0's test split), the network and its parameters.
  Status load() {
    at::set_num_threads(o_.threads);
    auto train = load_split(s_, c_.data_dir, /*train=*/true, c_.dataset_samples);
    if (!train) return train.status();
    train_ = std::move(train).value();
    // Epochs count the samples of the split loaded, as the sampler's epochs do.
    run::StopLimits limits = stop_limits(c_);
    limits.dataset_samples = train_.images.size(0);
    stop_ = run::StopRule(limits);
    if (rank_ == 0) {
      auto t = load_split(s_, c_.data_dir, /*train=*/false, s_.eval_samples);
      if (!t) return t.status();
      test_ = std::move(t).value();
    }
    torch::manual_seed(c_.seed);
    auto device = torch_device(s_.device);
    if (!device) return device.status();
    auto net = make_net(s_, *device);
    if (!net) return net.status();
    net_ = std::move(net).value();
    params_ = net_.parameters;
    for (const auto& p : params_) n_params_ += p.numel();
    // Buffer layout: [gradients | compute_s per worker | availability+1 per worker (0 = none) | stop reason | now_s |
    // loss per worker | accuracy per worker] (the last two let rank 0 report rows of workers on other nodes).
    const auto w = static_cast<std::int64_t>(world_);
    k_compute_ = n_params_, k_avail_ = k_compute_ + w, k_stop_ = k_avail_ + w, k_now_ = k_stop_ + 1;
    k_loss_ = k_now_ + 1, k_acc_ = k_loss_ + w, buffer_size_ = k_acc_ + w;
    return Status::ok();
  }

  // The store, the Gloo group (its threads moved out of the quota), and rank 0's weights on every rank.
  Status rendezvous() try {
    const std::vector<pid_t> before = own_thread_ids();
    auto store = open_store(o_, rank_, c_.world, /*serves=*/rank_ == 0);
    auto pg_opts = c10d::ProcessGroupGloo::Options::create(gloo_timeout(o_));
    pg_opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(c_.bind));
    pg_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank_, c_.world, pg_opts);
    // Gloo's and the store's threads run outside the CPU quota (emulator.throttle: compute): the all-reduce is
    // not stalled a quota period at each ring hop, as it would not be on a node with fewer cores.
    OMNI_RETURN_IF_ERROR(move_new_threads(before, o_.comm_thread_files));
    // Start from rank 0's weights (the seed already makes them equal; this makes it a fact).
    std::vector<torch::Tensor> parts;
    for (auto& p : params_) parts.push_back(p.detach().reshape(-1));
    std::vector<torch::Tensor> flat{torch::cat(parts).to(torch::kCPU)};  // Gloo collectives here run on host tensors
    pg_->broadcast(flat)->wait();
    torch::NoGradGuard ng;
    std::int64_t at = 0;
    for (auto& p : params_) {
      p.copy_(flat[0].narrow(0, at, p.numel()).view_as(p));
      at += p.numel();
    }
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::internal("rendezvous " +
                            (c_.store_file.empty() ? "on " + c_.store_host + ":" + std::to_string(c_.port)
                                                   : "through " + c_.store_file) + " failed: " + e.what());
  }

  // Training starts now on every rank (the broadcast was a barrier): run times count from here, and the launcher
  // starts replaying timed availability from here, so start-up (library loading, rendezvous) is in no measurement.
  Status start_training() {
    train_start_s_ = since_t0();
    if (rank_ == 0 || o_.lead) reporter_.send(ExtraRecord{"training_start_s", train_start_s_});
    auto ctl = run::make_controller(c_.controller);
    if (!ctl) return ctl.status();
    ctl_.emplace(std::move(ctl).value());
    if (rank_ == 0) reporter_.send(run::plan_record(ctl_->current_plan(), 0));
    auto start_plan = run::apply_start_levels(*ctl_, c_.initial_availability);  // workers down from the start
    if (!start_plan) return start_plan.status();
    if (rank_ == 0 && start_plan->decided) reporter_.send(run::plan_record(*start_plan, 0));
    batches_ = ctl_->current_plan().batch;
    sgd_.emplace(params_, torch::optim::SGDOptions(s_.learning_rate).momentum(s_.momentum));
    sampler_.emplace(train_.images.size(0), c_.seed);
    return Status::ok();
  }

  Status train() {
    for (;; ++step_) {
      // The step cap, the sample budget or the epochs: every rank's rule sees the same totals.
      if (stop_.progress(step_, samples_seen_) != run::StopReason::kNone) break;
      StepFacts f;
      f.start_s = since_t0();
      f.a = sampler_->next(batches_);
      epoch_ = f.a.epoch;
      compute(f);
      exchange(f);
      report_rows(f);
      OMNI_RETURN_IF_ERROR(decide(f));
      // Rank 0's rule stopped the run (the time budget, or the target at its last evaluation): every rank takes its
      // reason.
      const auto code = static_cast<std::int64_t>(std::lround(f.buffer.accessor<float, 1>()[k_stop_]));
      const std::optional<run::StopReason> reason = run::stop_reason_from_code(code);
      if (!reason) return Status::internal("step " + std::to_string(step_) + ": stop code " + std::to_string(code) +
                                           " from rank 0 names no stop reason");
      if (*reason != run::StopReason::kNone) {
        stop_.stop(*reason);
        ++step_;
        break;
      }
      if (rank_ == 0) {
        const bool due = s_.eval_every > 0 ? (step_ + 1) % s_.eval_every == 0 : f.a.last_in_epoch;
        if (due) run_evaluation(step_, f.a.epoch);
      }
    }
    return Status::ok();
  }

  // Forward + backward on this worker's share: the compute time the controller sees.
  void compute(StepFacts& f) {
    f.total = std::accumulate(f.a.batch.begin(), f.a.batch.end(), BatchSize{0});
    f.mine = f.a.batch[static_cast<std::size_t>(rank_)];
    const auto c0 = Clock::now();
    sgd_->zero_grad();
    if (f.mine > 0) {
      const auto idx_span = sampler_->indices(f.a, static_cast<std::size_t>(rank_));
      auto idx = torch::from_blob(const_cast<std::int64_t*>(idx_span.data()), {f.mine}, torch::kInt64);
      const double cpu_target_s = s_.sample_cost_s * static_cast<double>(f.mine);
      const StepResult r = forward_backward(net_, train_.images.index_select(0, idx),
                                            train_.labels.index_select(0, idx), cpu_target_s);
      note_cost_overrun(r, cpu_target_s, "omnilearn-emulate-worker " + std::to_string(rank_), warned_cost_);
      f.loss = r.loss, f.accuracy = r.accuracy;
    }
    f.compute_s = std::chrono::duration<double>(Clock::now() - c0).count();
  }

  // λ_k-weighted gradients and the step's facts in one SUM all-reduce; then the summed gradient is applied.
  void exchange(StepFacts& f) {
    f.buffer = torch::zeros({buffer_size_}, torch::kFloat32);
    pack(f);
    const auto m0 = Clock::now();
    std::vector<torch::Tensor> bufs{f.buffer};
    pg_->allreduce(bufs)->wait();
    f.comm_total = std::chrono::duration<double>(Clock::now() - m0).count();
    {
      torch::NoGradGuard ng;
      std::int64_t at = 0;
      for (auto& p : params_) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        p.grad().copy_(f.buffer.narrow(0, at, p.numel()).view_as(p));
        at += p.numel();
      }
    }
    if (s_.warmup_updates > 0) {
      const double ramp = std::min(1.0, static_cast<double>(step_ + 1) / static_cast<double>(s_.warmup_updates));
      static_cast<torch::optim::SGDOptions&>(sgd_->param_groups()[0].options()).lr(s_.learning_rate * ramp);
    }
    sgd_->step();
    samples_seen_ += f.total;
    train_s_ += f.compute_s + f.comm_total;
  }

  void pack(StepFacts& f) {
    torch::NoGradGuard ng;
    const double lambda = static_cast<double>(f.mine) / static_cast<double>(f.total);
    std::int64_t at = 0;
    for (auto& p : params_) {
      if (f.mine > 0 && p.grad().defined()) f.buffer.narrow(0, at, p.numel()).copy_(p.grad().reshape(-1)).mul_(lambda);
      at += p.numel();
    }
    auto acc = f.buffer.accessor<float, 1>();
    acc[k_compute_ + rank_] = static_cast<float>(f.compute_s);
    acc[k_loss_ + rank_] = static_cast<float>(f.loss);
    acc[k_acc_ + rank_] = static_cast<float>(f.accuracy);
    if (rank_ != 0) return;
    for (const AvailabilityNotice& n : notices_.poll()) {
      if (n.worker < world_) pending_avail_[n.worker] = n.fraction;
    }
    for (const auto& [k, fraction] : pending_avail_) acc[k_avail_ + static_cast<std::int64_t>(k)] = static_cast<float>(fraction + 1.0);
    pending_avail_.clear();
    stop_.elapsed(since_t0() - train_start_s_);
    acc[k_stop_] = static_cast<float>(run::stop_reason_code(stop_.reason()));
    acc[k_now_] = static_cast<float>(since_t0());
  }

  // This worker's row, and on rank 0 the rows of workers on other nodes, derived from the all-reduced facts on
  // rank 0's clock: the step ends at the same moment everywhere, so a worker's exchange is what is left of rank 0's
  // step after its own compute.
  void report_rows(const StepFacts& f) {
    auto acc = f.buffer.accessor<float, 1>();
    double slowest = 0.0;
    for (std::size_t k = 0; k < world_; ++k) {
      if (f.a.batch[k] > 0) slowest = std::max(slowest, static_cast<double>(acc[k_compute_ + static_cast<std::int64_t>(k)]));
    }
    // The all-reduce time splits into waiting for the slowest worker and the exchange itself.
    const double wait_s = f.mine > 0 ? std::max(0.0, slowest - f.compute_s) : 0.0;
    run::IterationRecord rec;
    rec.worker = static_cast<WorkerId>(rank_), rec.step = step_, rec.epoch = f.a.epoch, rec.start_s = f.start_s;
    rec.compute_s = f.compute_s, rec.comm_s = std::max(0.0, f.comm_total - wait_s);
    rec.wait_s = std::min(wait_s, f.comm_total), rec.batch = f.mine;
    if (f.mine > 0) rec.loss = f.loss, rec.accuracy = f.accuracy;
    reporter_.send(rec);
    const std::size_t from = rank_ == 0 && o_.report_from >= 0 ? static_cast<std::size_t>(o_.report_from) : world_;
    for (std::size_t k = from; k < world_; ++k) {
      run::IterationRecord other = rec;
      const auto ki = static_cast<std::int64_t>(k);
      const double time_k = acc[k_compute_ + ki];
      const double exchange = std::max(0.0, f.compute_s + f.comm_total - time_k);
      const double waited = f.a.batch[k] > 0 ? std::min(std::max(0.0, slowest - time_k), exchange) : 0.0;
      other.worker = static_cast<WorkerId>(k), other.compute_s = time_k, other.batch = f.a.batch[k];
      other.wait_s = waited, other.comm_s = exchange - waited;
      other.loss.reset(), other.accuracy.reset();
      if (f.a.batch[k] > 0) other.loss = acc[k_loss_ + ki], other.accuracy = acc[k_acc_ + ki];
      reporter_.send(other);
    }
  }

  // Every rank feeds the same facts to its own Controller, so every rank gets the same plan.
  Status decide(const StepFacts& f) {
    auto acc = f.buffer.accessor<float, 1>();
    const double now_s = acc[k_now_];
    const auto d0 = Clock::now();
    if (!f.a.last_in_epoch) {  // the shrunken remainder step would skew the per-batch times
      for (std::size_t k = 0; k < world_; ++k) {
        if (f.a.batch[k] == 0) continue;
        (void)ctl_->report(controller::IterationDone{static_cast<WorkerId>(k), step_, now_s,
                                                     acc[k_compute_ + static_cast<std::int64_t>(k)], f.a.batch[k]});
      }
    }
    for (std::size_t k = 0; k < world_; ++k) {
      const float avail = acc[k_avail_ + static_cast<std::int64_t>(k)];
      if (avail > 0.0f) {
        (void)ctl_->report(controller::AvailabilityChange{static_cast<WorkerId>(k), now_s, static_cast<double>(avail) - 1.0});
      }
    }
    auto plan = ctl_->plan_next(controller::DecisionPoint{step_ + 1, f.a.last_in_epoch ? f.a.epoch + 1 : f.a.epoch, now_s});
    if (!plan) return plan.status();
    decision_s_ += std::chrono::duration<double>(Clock::now() - d0).count();
    batches_ = plan->batch;
    if (rank_ == 0 && plan->decided) reporter_.send(run::plan_record(*plan, f.a.epoch));
    return Status::ok();
  }

  // Rank 0 evaluates outside its quota when it can (the others wait idle in the next all-reduce meanwhile): the
  // pause is not training time, so this only shortens the run.
  void run_evaluation(std::int64_t at_step, std::int64_t at_epoch) {
    const bool unthrottled = !o_.comm_thread_files.empty() && !o_.compute_thread_files.empty();
    const auto e0 = Clock::now();
    if (unthrottled) move_this_thread(o_.comm_thread_files);
    const Evaluation ev = evaluate(net_, test_);
    if (unthrottled) move_this_thread(o_.compute_thread_files);
    const double at_s = since_t0();
    eval_s_ += std::chrono::duration<double>(Clock::now() - e0).count();
    reporter_.send(run::EvaluationRecord{at_s, at_step, at_epoch, ev.loss, ev.accuracy});
    last_eval_step_ = at_step;
    if (stop_.evaluation(ev.accuracy) == run::StopReason::kTarget && !time_to_target_) {
      time_to_target_ = at_s - train_start_s_ - eval_s_;  // evaluation pauses do not count
      steps_to_target_ = at_step + 1;
    }
  }

  static void move_this_thread(const std::vector<std::string>& files) {
    if (Status s = move_thread(current_thread_id(), files); !s.is_ok()) throw std::runtime_error(s.message());
  }

  // Rank 0's last evaluation and the run's closing numbers; every rank's stop reason.
  void report_end() {
    if (rank_ == 0) {
      if (last_eval_step_ != step_ - 1) run_evaluation(step_ - 1, epoch_);
      report_totals(reporter_, {decision_s_, train_s_, eval_s_, n_params_, time_to_target_, steps_to_target_, {}, {}});
    }
    reporter_.send(DoneRecord{stop_.reason()});
  }

  const WorkerOptions& o_;
  const TestbedConfig& c_;
  const scenarios::EmulatorSpec& s_;
  const int rank_;
  const std::size_t world_;
  const Clock::time_point t0_;
  Reporter reporter_;
  NoticeReader notices_;
  Split train_, test_;
  Net net_;
  std::vector<torch::Tensor> params_;
  std::int64_t n_params_ = 0;
  std::int64_t k_compute_ = 0, k_avail_ = 0, k_stop_ = 0, k_now_ = 0, k_loss_ = 0, k_acc_ = 0, buffer_size_ = 0;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  std::optional<controller::Controller> ctl_;
  std::optional<torch::optim::SGD> sgd_;
  std::optional<GlobalSampler> sampler_;
  std::vector<BatchSize> batches_;
  std::map<std::size_t, double> pending_avail_;  // rank 0: availability notices for the next all-reduce
  run::StopRule stop_;  // rank 0 feeds it the time and the evaluations; the others take its reason from the step
  double train_start_s_ = 0.0, decision_s_ = 0.0, eval_s_ = 0.0, train_s_ = 0.0;
  std::optional<double> time_to_target_;
  std::int64_t steps_to_target_ = -1;
  bool warned_cost_ = false;  // the emulated cost was below this host's own cost (said once)
  std::int64_t samples_seen_ = 0, step_ = 0, last_eval_step_ = -1, epoch_ = 0;
};

}  // namespace

int run_bsp_worker(const WorkerOptions& options) {
  try {
    return BspWorker(options).run();
  } catch (const std::exception& e) {
    return fail(e.what(), options.rank);
  }
}

}  // namespace omnilearn::emulator::worker
