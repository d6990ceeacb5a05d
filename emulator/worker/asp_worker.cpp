// ASP on the testbed (LibTorch). n worker processes (Gloo ranks 0..n-1, each in its cgroup) and one parameter
// server process (rank n, outside the workers' cgroups; it also serves the TCPStore). Messages are c10d Gloo
// point-to-point send/recv of flat float tensors (no extra dependency, the same transport as BSP):
//   push  (worker -> server, tag 0): [gradient | compute_s, batch, start_s, loss, accuracy]
//   reply (server -> worker, tag 1): [weights | batch, staleness, stop, update, epoch]
// The server takes pushes in arrival order (recvAnysource), applies each at once (w -= η_k g_k with
// η_k = η b_k / b_ref when lr_scaling is on, b_ref = B / n; SGD momentum as configured), counts staleness
// (updates applied since that worker last pulled), runs the Controller in ASP mode for per-worker batches and
// answers with the new weights and batch. A worker with batch 0 (down) sends empty pushes every 50 ms.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/emulator/global_sampler.h"
#include "omnilearn/emulator/thread_groups.h"
#include "omnilearn/scenarios/scenario_parser.h"
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
enum Reply : std::int64_t { kReplyBatch, kStaleness, kStop, kUpdate, kEpoch, kReplyFields };

int fail(const std::string& who, const std::string& msg) {
  std::cerr << "omnilearn-emulate-worker " << who << ": " << msg << "\n";
  return 1;
}

c10::intrusive_ptr<c10d::ProcessGroupGloo> connect(const WorkerOptions& o) {
  const std::vector<pid_t> before = own_thread_ids();
  auto store = open_store(o, o.rank, o.world + 1, /*serves=*/o.server);
  auto opts = c10d::ProcessGroupGloo::Options::create(gloo_timeout(o));
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, o.rank, o.world + 1, opts);
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

int run_worker(const WorkerOptions& o) {
  const std::string who = "asp worker " + std::to_string(o.rank);
  bool warned_cost = false;  // the emulated cost was below this host's own cost (said once)
  auto scenario = scenarios::load_scenario(o.scenario_path, o.overrides);
  if (!scenario) return fail(who, scenario.status().message());
  at::set_num_threads(o.threads);
  const Clock::time_point t0{std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(o.t0_ns))};
  auto since_t0 = [&]() { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto train = read_split(o.data_dir, "train", std::min<std::int64_t>(scenario->workload.dataset_samples, 60000));
  if (!train) return fail(who, train.status().message());
  torch::manual_seed(scenario->seed);
  auto device = torch_device(o.config.device);
  if (!device) return fail(who, device.status().message());
  Net net = make_net(o.config.network, *device);
  std::vector<torch::Tensor> params = net.module->parameters();
  const std::int64_t n_params = count_params(params);
  Reporter reporter(o.out_fd);

  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  try {
    pg = connect(o);
  } catch (const std::exception& e) {
    return fail(who, std::string("rendezvous through ").append(o.store_file).append(" failed: ").append(e.what()));
  }
  // Each worker walks its own seeded permutation of the training set; the server counts epochs by samples applied.
  GlobalSampler sampler(train->images.size(0), scenario->seed + 7919u * static_cast<std::uint64_t>(o.rank + 1));
  std::vector<torch::Tensor> reply{torch::zeros({n_params + kReplyFields}, torch::kFloat32)};
  std::vector<torch::Tensor> push{torch::zeros({n_params + kPushFields}, torch::kFloat32)};
  pg->recv(reply, o.world, kReplyTag)->wait();  // the initial pull
  std::string reason = "epochs";
  for (;;) {
    auto r = reply[0].accessor<float, 1>();
    if (r[n_params + kStop] > 0.0f) break;
    unflatten_from(params, reply[0], /*grads=*/false);
    const auto batch = static_cast<BatchSize>(r[n_params + kReplyBatch]);
    const double start_s = since_t0();
    auto p = push[0].accessor<float, 1>();
    double compute_s = 0.0;
    StepResult step;
    if (batch > 0) {
      const std::vector<BatchSize> mine{batch};
      const StepAssignment a = sampler.next(mine);
      const BatchSize got = a.batch[0];  // the end of this worker's permutation may shrink it
      const auto idx_span = sampler.indices(a, 0);
      const auto c0 = Clock::now();
      auto idx = torch::from_blob(const_cast<std::int64_t*>(idx_span.data()), {got}, torch::kInt64);
      const double cpu_target_s = o.config.sample_cost_s * static_cast<double>(got);
      step = forward_backward(net, train->images.index_select(0, idx), train->labels.index_select(0, idx), cpu_target_s);
      note_cost_overrun(step, cpu_target_s, who, warned_cost);
      compute_s = std::chrono::duration<double>(Clock::now() - c0).count();
      flatten_into(params, push[0], /*grads=*/true);
      p[n_params + kBatch] = static_cast<float>(got);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // down: ask again soon
      p[n_params + kBatch] = 0.0f;
    }
    p[n_params + kComputeS] = static_cast<float>(compute_s);
    p[n_params + kStartS] = static_cast<float>(start_s);
    p[n_params + kLoss] = static_cast<float>(step.loss);
    p[n_params + kAccuracy] = static_cast<float>(step.accuracy);
    const auto m0 = Clock::now();
    pg->send(push, o.world, kPushTag)->wait();
    pg->recv(reply, o.world, kReplyTag)->wait();
    const double comm_s = std::chrono::duration<double>(Clock::now() - m0).count();
    if (batch > 0) {
      auto q = reply[0].accessor<float, 1>();
      scenarios::IterationRecord rec;
      rec.worker = static_cast<WorkerId>(o.rank);
      rec.step = static_cast<std::int64_t>(q[n_params + kUpdate]);
      rec.epoch = static_cast<std::int64_t>(q[n_params + kEpoch]);
      rec.start_s = start_s, rec.compute_s = compute_s, rec.comm_s = comm_s, rec.wait_s = 0.0;
      rec.batch = static_cast<BatchSize>(p[n_params + kBatch]);
      rec.loss = step.loss, rec.accuracy = step.accuracy;
      rec.staleness = static_cast<std::int64_t>(q[n_params + kStaleness]);
      reporter.send(rec);
    }
  }
  reporter.send(DoneRecord{reason});
  return 0;
}

int run_server(const WorkerOptions& o) {
  const std::string who = "parameter server";
  auto scenario_or = scenarios::load_scenario(o.scenario_path, o.overrides);
  if (!scenario_or) return fail(who, scenario_or.status().message());
  const scenarios::Scenario& scenario = *scenario_or;
  const auto world = static_cast<std::size_t>(o.world);
  if (scenario.worker_count() != world) return fail(who, "the scenario's worker count differs from --world");
  const EmulatorConfig& cfg = o.config;
  at::set_num_threads(o.threads);
  const Clock::time_point t0{std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(o.t0_ns))};
  auto since_t0 = [&]() { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto test = read_split(o.data_dir, "t10k", cfg.eval_samples);
  if (!test) return fail(who, test.status().message());
  torch::manual_seed(scenario.seed);
  Net net = make_net(cfg.network);
  std::vector<torch::Tensor> params = net.module->parameters();
  const std::int64_t n_params = count_params(params);
  Reporter reporter(o.out_fd);
  NoticeReader notices(o.in_fd);

  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  try {
    pg = connect(o);
  } catch (const std::exception& e) {
    return fail(who, std::string("rendezvous through ").append(o.store_file).append(" failed: ").append(e.what()));
  }
  auto registry = controller::make_default_registry();
  auto policy = registry.make(scenario.policy.name, scenario.policy.options);
  if (!policy) return fail(who, policy.status().message());
  auto ctl_or = controller::Controller::create(scenario.controller_options(), std::move(policy).value());
  if (!ctl_or) return fail(who, ctl_or.status().message());
  controller::Controller ctl = std::move(ctl_or).value();
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(cfg.learning_rate).momentum(cfg.momentum));
  const double b_ref = std::max(1.0, static_cast<double>(scenario.workload.global_batch) / static_cast<double>(world));

  const double train_start_s = since_t0();
  reporter.send(ExtraRecord{"training_start_s", train_start_s});
  auto plan_record = [](const controller::Plan& p, std::int64_t epoch) {
    scenarios::PlanRecord r;
    r.step = p.step, r.epoch = epoch, r.time_s = p.time_s, r.reason = controller::to_string(p.reason);
    r.changed = p.changed, r.imbalance = p.imbalance, r.batch = p.batch, r.weight = p.weight;
    return r;
  };
  reporter.send(plan_record(ctl.current_plan(), 0));

  std::int64_t updates = 0, samples = 0, epoch = 0, last_eval_update = -1;
  std::vector<std::int64_t> pulled(world, 0);
  std::vector<bool> stopped(world, false);
  double eval_s = 0.0, apply_s = 0.0, decision_s = 0.0;
  std::optional<double> time_to_target;
  std::int64_t updates_to_target = -1;
  bool stop = false;
  std::string reason = "epochs";
  const std::int64_t sample_budget = scenario.workload.sample_budget > 0
                                         ? scenario.workload.sample_budget
                                         : scenario.workload.epochs * scenario.workload.dataset_samples;
  auto training_s = [&]() { return since_t0() - train_start_s - eval_s; };  // evaluations do not count
  auto run_evaluation = [&]() {
    const auto e0 = Clock::now();
    const Evaluation ev = evaluate(net, *test);
    const double at_s = since_t0();
    eval_s += std::chrono::duration<double>(Clock::now() - e0).count();
    reporter.send(scenarios::EvaluationRecord{at_s, updates, epoch, ev.loss, ev.accuracy});
    last_eval_update = updates;
    if (cfg.target_accuracy > 0 && ev.accuracy >= cfg.target_accuracy && !time_to_target) {
      time_to_target = training_s();
      updates_to_target = updates;
      reason = "target";
      stop = true;
    }
  };

  std::vector<torch::Tensor> reply{torch::zeros({n_params + kReplyFields}, torch::kFloat32)};
  std::vector<torch::Tensor> push{torch::zeros({n_params + kPushFields}, torch::kFloat32)};
  auto send_reply = [&](std::size_t k, std::int64_t staleness) {
    flatten_into(params, reply[0], /*grads=*/false);
    auto r = reply[0].accessor<float, 1>();
    r[n_params + kReplyBatch] = static_cast<float>(ctl.current_plan().batch[k]);
    r[n_params + kStaleness] = static_cast<float>(staleness);
    r[n_params + kStop] = stop ? 1.0f : 0.0f;
    r[n_params + kUpdate] = static_cast<float>(updates);
    r[n_params + kEpoch] = static_cast<float>(epoch);
    pg->send(reply, static_cast<int>(k), kReplyTag)->wait();
    pulled[k] = updates;
    if (stop) stopped[k] = true;
  };

  try {
    for (std::size_t k = 0; k < world; ++k) send_reply(k, 0);
    while (std::count(stopped.begin(), stopped.end(), true) < static_cast<std::ptrdiff_t>(world)) {
      auto work = pg->recvAnysource(push, kPushTag);
      work->wait();
      const auto k = static_cast<std::size_t>(work->sourceRank());
      auto p = push[0].accessor<float, 1>();
      const auto batch = static_cast<BatchSize>(p[n_params + kBatch]);
      std::int64_t staleness = 0;
      const double now_s = since_t0();
      if (batch > 0 && !stop) {
        const auto a0 = Clock::now();
        staleness = updates - pulled[k];
        unflatten_from(params, push[0], /*grads=*/true);
        double lr = cfg.learning_rate;
        if (cfg.lr_scaling) lr *= static_cast<double>(batch) / b_ref;
        if (cfg.warmup_updates > 0) {
          lr *= std::min(1.0, static_cast<double>(updates + 1) / static_cast<double>(cfg.warmup_updates));
        }
        static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).lr(lr);
        sgd.step();
        ++updates;
        samples += batch;
        apply_s += std::chrono::duration<double>(Clock::now() - a0).count();

        const auto d0 = Clock::now();
        (void)ctl.report(controller::IterationDone{static_cast<WorkerId>(k), updates, now_s,
                                                   static_cast<double>(p[n_params + kComputeS]), batch});
        for (const AvailabilityNotice& n : notices.poll()) {
          if (n.worker < world) (void)ctl.report(controller::AvailabilityChange{n.worker, now_s, n.fraction});
        }
        const std::int64_t new_epoch = samples / scenario.workload.dataset_samples;
        const bool epoch_ended = new_epoch > epoch;
        epoch = new_epoch;
        auto plan = ctl.plan_next(controller::DecisionPoint{updates, epoch, now_s});
        if (!plan) return fail(who, plan.status().message());
        decision_s += std::chrono::duration<double>(Clock::now() - d0).count();
        if (plan->decided) reporter.send(plan_record(*plan, epoch));

        if (samples >= sample_budget) { stop = true; reason = scenario.workload.sample_budget > 0 ? "budget" : "epochs"; }
        if (scenario.max_iterations > 0 && updates >= scenario.max_iterations) { stop = true; reason = "iterations"; }
        if (cfg.time_budget_s > 0 && training_s() >= cfg.time_budget_s) { stop = true; reason = "time"; }
        const bool due = cfg.eval_every > 0 ? updates % cfg.eval_every == 0 : epoch_ended;
        if (!stop && due) run_evaluation();
      } else if (batch == 0) {
        for (const AvailabilityNotice& n : notices.poll()) {
          if (n.worker < world) (void)ctl.report(controller::AvailabilityChange{n.worker, now_s, n.fraction});
        }
        auto plan = ctl.plan_next(controller::DecisionPoint{updates, epoch, now_s});
        if (plan && plan->decided) reporter.send(plan_record(*plan, epoch));
        if (cfg.time_budget_s > 0 && training_s() >= cfg.time_budget_s) { stop = true; reason = "time"; }
      }
      send_reply(k, staleness);
    }
  } catch (const std::exception& e) {
    return fail(who, std::string("failed after update ").append(std::to_string(updates)).append(": ").append(e.what()));
  }
  if (last_eval_update != updates) run_evaluation();
  const double train_s = training_s();
  reporter.send(ExtraRecord{"controller_decision_s", decision_s});
  reporter.send(ExtraRecord{"controller_overhead", train_s > 0 ? decision_s / train_s : 0.0});
  reporter.send(ExtraRecord{"server_apply_s", apply_s});
  reporter.send(ExtraRecord{"training_time_s", train_s});
  reporter.send(ExtraRecord{"evaluation_time_s", eval_s});
  reporter.send(ExtraRecord{"parameters", static_cast<double>(n_params)});
  reporter.send(ExtraRecord{"updates", static_cast<double>(updates)});
  reporter.send(ExtraRecord{"time_to_target_s", time_to_target.value_or(-1.0)});
  // Steps to target (here: applied updates), so that "faster steps" and "fewer steps" can be told apart.
  if (updates_to_target >= 0) reporter.send(ExtraRecord{"steps_to_target", static_cast<double>(updates_to_target)});
  reporter.send(DoneRecord{reason});
  return 0;
}

}  // namespace

int run_asp_worker(const WorkerOptions& options) {
  try {
    return run_worker(options);
  } catch (const std::exception& e) {
    return fail("asp worker " + std::to_string(options.rank), e.what());
  }
}

int run_parameter_server(const WorkerOptions& options) {
  try {
    return run_server(options);
  } catch (const std::exception& e) {
    return fail("parameter server", e.what());
  }
}

}  // namespace omnilearn::emulator::worker
