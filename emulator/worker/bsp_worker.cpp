// The BSP worker (LibTorch; data, networks and the compute step are in torch_parts.h). c10d TCPStore (on
// --store-host) + ProcessGroupGloo (bound to --bind; both 127.0.0.1 on one host), one flattened SUM all-reduce per
// step that also carries every worker's measured compute time and rank 0's availability notices and stop flag, so
// every rank runs an identical Controller.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/emulator/global_sampler.h"
#include "omnilearn/emulator/thread_groups.h"
#include "omnilearn/emulator/worker_protocol.h"
#include "omnilearn/scenarios/scenario_parser.h"
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

int run(const WorkerOptions& o) {
  const int rank = o.rank;
  const auto world = static_cast<std::size_t>(o.world);
  auto scenario_or = scenarios::load_scenario(o.scenario_path, o.overrides);
  if (!scenario_or) return fail(scenario_or.status().message(), rank);
  const scenarios::Scenario& scenario = *scenario_or;
  if (scenario.worker_count() != world) return fail("the scenario's worker count differs from --world", rank);
  const EmulatorConfig& cfg = o.config;

  at::set_num_threads(o.threads);
  const Clock::time_point t0{std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(o.t0_ns))};
  auto since_t0 = [&]() { return std::chrono::duration<double>(Clock::now() - t0).count(); };

  auto train = read_split(o.data_dir, "train", std::min<std::int64_t>(scenario.workload.dataset_samples, 60000));
  if (!train) return fail(train.status().message(), rank);
  std::optional<Split> test;
  if (rank == 0) {
    auto t = read_split(o.data_dir, "t10k", cfg.eval_samples);
    if (!t) return fail(t.status().message(), rank);
    test = std::move(t).value();
  }
  const std::int64_t train_n = train->images.size(0);

  torch::manual_seed(scenario.seed);
  auto device = torch_device(cfg.device);
  if (!device) return fail(device.status().message(), rank);
  Net net = make_net(cfg.network, *device);
  std::vector<torch::Tensor> params = net.module->parameters();
  std::int64_t n_params = 0;
  for (const auto& p : params) n_params += p.numel();

  Reporter reporter(o.out_fd);
  NoticeReader notices(rank == 0 ? o.in_fd : -1);

  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  try {
    const std::vector<pid_t> before = own_thread_ids();
    auto store = open_store(o, rank, static_cast<int>(world), /*serves=*/rank == 0);
    auto pg_opts = c10d::ProcessGroupGloo::Options::create(gloo_timeout(o));
    pg_opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(o.bind));
    pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, o.world, pg_opts);
    // Gloo's and the store's threads run outside the CPU quota (emulator.throttle: compute): the all-reduce is
    // not stalled a quota period at each ring hop, as it would not be on a node with fewer cores.
    const Status moved = move_new_threads(before, o.comm_thread_files);
    if (!moved.is_ok()) return fail(moved.message(), rank);
    // Start from rank 0's weights (the seed already makes them equal; this makes it a fact).
    std::vector<torch::Tensor> flat{torch::cat([&] {
      std::vector<torch::Tensor> v;
      for (auto& p : params) v.push_back(p.detach().reshape(-1));
      return v;
    }()).to(torch::kCPU)};  // Gloo collectives here run on host tensors
    pg->broadcast(flat)->wait();
    torch::NoGradGuard ng;
    std::int64_t at = 0;
    for (auto& p : params) {
      p.copy_(flat[0].narrow(0, at, p.numel()).view_as(p));
      at += p.numel();
    }
  } catch (const std::exception& e) {
    return fail("rendezvous " + (o.store_file.empty() ? "on " + o.store_host + ":" + std::to_string(o.port)
                                                      : "through " + o.store_file) + " failed: " + e.what(), rank);
  }

  // Training starts now on every rank (the broadcast above is a barrier): run times count from here, and the
  // launcher starts replaying timed availability from here, so start-up (~1-4 s of library loading and
  // rendezvous) is in no measurement.
  const double train_start_s = since_t0();
  if (rank == 0 || o.lead) reporter.send(ExtraRecord{"training_start_s", train_start_s});

  auto registry = controller::make_default_registry();
  auto policy = registry.make(scenario.policy.name, scenario.policy.options);
  if (!policy) return fail(policy.status().message(), rank);
  auto ctl_or = controller::Controller::create(scenario.controller_options(), std::move(policy).value());
  if (!ctl_or) return fail(ctl_or.status().message(), rank);
  controller::Controller ctl = std::move(ctl_or).value();
  std::vector<BatchSize> batches = ctl.current_plan().batch;

  torch::optim::SGD sgd(params, torch::optim::SGDOptions(cfg.learning_rate).momentum(cfg.momentum));
  GlobalSampler sampler(train_n, scenario.seed);

  auto plan_record = [](const controller::Plan& p, std::int64_t epoch) {
    scenarios::PlanRecord r;
    r.step = p.step, r.epoch = epoch, r.time_s = p.time_s, r.reason = controller::to_string(p.reason);
    r.changed = p.changed, r.imbalance = p.imbalance, r.batch = p.batch, r.weight = p.weight;
    return r;
  };
  if (rank == 0) reporter.send(plan_record(ctl.current_plan(), 0));

  // Buffer layout: [gradients | compute_s per worker | availability+1 per worker (0 = none) | stop | now_s |
  // loss per worker | accuracy per worker] (the last two let rank 0 report rows of workers on other nodes).
  const std::int64_t kCompute = n_params, kAvail = kCompute + o.world, kStop = kAvail + o.world, kNow = kStop + 1;
  const std::int64_t kLoss = kNow + 1, kAcc = kLoss + o.world;
  const std::int64_t buffer_size = kAcc + o.world;
  const std::size_t report_from = rank == 0 && o.report_from >= 0 ? static_cast<std::size_t>(o.report_from) : world;

  double decision_s = 0.0, eval_s = 0.0, train_s = 0.0;
  std::optional<double> time_to_target;
  std::int64_t steps_to_target = -1;
  bool warned_cost = false;  // the emulated cost was below this host's own cost (said once)
  std::int64_t samples_seen = 0;
  bool stop_next = false;
  std::string reason = "epochs";
  std::int64_t step = 0;
  std::int64_t last_eval_step = -1, epoch = 0;
  std::vector<double> pending_avail(world, -1.0);

  // Rank 0 evaluates outside its quota when it can (the others wait idle in the next all-reduce meanwhile):
  // the pause is not training time, so this only shortens the run.
  const bool eval_unthrottled = !o.comm_thread_files.empty() && !o.compute_thread_files.empty();
  auto run_evaluation = [&](std::int64_t at_step, std::int64_t at_epoch) {
    const auto e0 = Clock::now();
    if (eval_unthrottled) {
      if (Status s = move_thread(current_thread_id(), o.comm_thread_files); !s.is_ok()) throw std::runtime_error(s.message());
    }
    const Evaluation ev = evaluate(net, *test);
    if (eval_unthrottled) {
      if (Status s = move_thread(current_thread_id(), o.compute_thread_files); !s.is_ok()) throw std::runtime_error(s.message());
    }
    const double at_s = since_t0();
    eval_s += std::chrono::duration<double>(Clock::now() - e0).count();
    reporter.send(scenarios::EvaluationRecord{at_s, at_step, at_epoch, ev.loss, ev.accuracy});
    last_eval_step = at_step;
    if (cfg.target_accuracy > 0 && ev.accuracy >= cfg.target_accuracy && !time_to_target) {
      time_to_target = at_s - train_start_s - eval_s;  // evaluation pauses do not count
      steps_to_target = at_step + 1;
      reason = "target";
      stop_next = true;
    }
  };

  try {
    for (;; ++step) {
      if (scenario.max_iterations > 0 && step >= scenario.max_iterations) { reason = "iterations"; break; }
      if (scenario.workload.sample_budget > 0 && samples_seen >= scenario.workload.sample_budget) { reason = "budget"; break; }
      const double start_s = since_t0();
      const StepAssignment a = sampler.next(batches);
      if (a.epoch >= scenario.workload.epochs) { reason = "epochs"; break; }
      epoch = a.epoch;
      const BatchSize total = std::accumulate(a.batch.begin(), a.batch.end(), BatchSize{0});
      const BatchSize mine = a.batch[static_cast<std::size_t>(rank)];

      // Forward + backward on this worker's share: the compute time the controller sees.
      const auto c0 = Clock::now();
      sgd.zero_grad();
      double loss_v = 0.0, acc_v = 0.0;
      if (mine > 0) {
        const auto idx_span = sampler.indices(a, static_cast<std::size_t>(rank));
        auto idx = torch::from_blob(const_cast<std::int64_t*>(idx_span.data()), {mine}, torch::kInt64);
        auto x = train->images.index_select(0, idx);
        auto y = train->labels.index_select(0, idx);
        const double cpu_target_s = cfg.sample_cost_s * static_cast<double>(mine);
        const StepResult r = forward_backward(net, x, y, cpu_target_s);
        note_cost_overrun(r, cpu_target_s, "omnilearn-emulate-worker " + std::to_string(rank), warned_cost);
        loss_v = r.loss;
        acc_v = r.accuracy;
      }
      const double compute_s = std::chrono::duration<double>(Clock::now() - c0).count();

      // λ_k-weighted gradients and the step's facts, in one SUM all-reduce.
      auto buffer = torch::zeros({buffer_size}, torch::kFloat32);
      {
        torch::NoGradGuard ng;
        const double lambda = static_cast<double>(mine) / static_cast<double>(total);
        std::int64_t at = 0;
        for (auto& p : params) {
          if (mine > 0 && p.grad().defined()) buffer.narrow(0, at, p.numel()).copy_(p.grad().reshape(-1)).mul_(lambda);
          at += p.numel();
        }
        auto acc = buffer.accessor<float, 1>();
        acc[kCompute + rank] = static_cast<float>(compute_s);
        acc[kLoss + rank] = static_cast<float>(loss_v);
        acc[kAcc + rank] = static_cast<float>(acc_v);
        if (rank == 0) {
          for (const AvailabilityNotice& n : notices.poll()) {
            if (n.worker < world) pending_avail[n.worker] = n.fraction;
          }
          for (std::size_t k = 0; k < world; ++k) {
            if (pending_avail[k] >= 0.0) acc[kAvail + static_cast<std::int64_t>(k)] = static_cast<float>(pending_avail[k] + 1.0);
            pending_avail[k] = -1.0;
          }
          if (cfg.time_budget_s > 0 && since_t0() - train_start_s >= cfg.time_budget_s) { stop_next = true; reason = "time"; }
          acc[kStop] = stop_next ? 1.0f : 0.0f;
          acc[kNow] = static_cast<float>(since_t0());
        }
      }
      const auto m0 = Clock::now();
      std::vector<torch::Tensor> bufs{buffer};
      pg->allreduce(bufs)->wait();
      const double comm_total = std::chrono::duration<double>(Clock::now() - m0).count();
      {
        torch::NoGradGuard ng;
        std::int64_t at = 0;
        for (auto& p : params) {
          if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
          p.grad().copy_(buffer.narrow(0, at, p.numel()).view_as(p));
          at += p.numel();
        }
      }
      if (cfg.warmup_updates > 0) {
        const double ramp = std::min(1.0, static_cast<double>(step + 1) / static_cast<double>(cfg.warmup_updates));
        static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).lr(cfg.learning_rate * ramp);
      }
      sgd.step();
      samples_seen += total;

      auto acc = buffer.accessor<float, 1>();
      std::vector<double> times(world);
      double slowest = 0.0;
      for (std::size_t k = 0; k < world; ++k) {
        times[k] = acc[kCompute + static_cast<std::int64_t>(k)];
        if (a.batch[k] > 0) slowest = std::max(slowest, times[k]);
      }
      // The all-reduce time splits into waiting for the slowest worker and the exchange itself.
      const double wait_s = mine > 0 ? std::max(0.0, slowest - compute_s) : 0.0;
      const double comm_s = std::max(0.0, comm_total - wait_s);
      scenarios::IterationRecord rec;
      rec.worker = static_cast<WorkerId>(rank), rec.step = step, rec.epoch = a.epoch, rec.start_s = start_s;
      rec.compute_s = compute_s, rec.comm_s = comm_s, rec.wait_s = std::min(wait_s, comm_total), rec.batch = mine;
      if (mine > 0) rec.loss = loss_v, rec.accuracy = acc_v;
      reporter.send(rec);
      // Rows of workers on other nodes, derived from the all-reduced facts on rank 0's clock: the step ends at the
      // same moment everywhere, so a worker's exchange is what is left of rank 0's step after its own compute.
      for (std::size_t k = report_from; k < world; ++k) {
        scenarios::IterationRecord other = rec;
        const auto ki = static_cast<std::int64_t>(k);
        const double exchange = std::max(0.0, compute_s + comm_total - times[k]);
        const double waited = a.batch[k] > 0 ? std::min(std::max(0.0, slowest - times[k]), exchange) : 0.0;
        other.worker = static_cast<WorkerId>(k), other.compute_s = times[k], other.batch = a.batch[k];
        other.wait_s = waited, other.comm_s = exchange - waited;
        other.loss.reset(), other.accuracy.reset();
        if (a.batch[k] > 0) other.loss = acc[kLoss + ki], other.accuracy = acc[kAcc + ki];
        reporter.send(other);
      }
      train_s += compute_s + comm_total;

      // Every rank feeds the same facts to its own Controller, so every rank gets the same plan.
      const double now_s = acc[kNow];
      const auto d0 = Clock::now();
      if (!a.last_in_epoch) {  // the shrunken remainder step would skew the per-batch times
        for (std::size_t k = 0; k < world; ++k) {
          if (a.batch[k] > 0) {
            (void)ctl.report(controller::IterationDone{static_cast<WorkerId>(k), step, now_s, times[k], a.batch[k]});
          }
        }
      }
      for (std::size_t k = 0; k < world; ++k) {
        if (acc[kAvail + static_cast<std::int64_t>(k)] > 0.0f) {
          (void)ctl.report(controller::AvailabilityChange{static_cast<WorkerId>(k), now_s,
                                                          static_cast<double>(acc[kAvail + static_cast<std::int64_t>(k)]) - 1.0});
        }
      }
      auto plan = ctl.plan_next(controller::DecisionPoint{step + 1, a.last_in_epoch ? a.epoch + 1 : a.epoch, now_s});
      if (!plan) return fail(plan.status().message(), rank);
      decision_s += std::chrono::duration<double>(Clock::now() - d0).count();
      batches = plan->batch;
      if (rank == 0 && plan->decided) reporter.send(plan_record(*plan, a.epoch));
      if (acc[kStop] > 0.0f) {
        if (rank != 0) reason = "target";
        ++step;
        break;
      }
      if (rank == 0) {
        const bool due = cfg.eval_every > 0 ? (step + 1) % cfg.eval_every == 0 : a.last_in_epoch;
        if (due) run_evaluation(step, a.epoch);
      }
    }
  } catch (const std::exception& e) {
    return fail(std::string("training failed at step ").append(std::to_string(step)).append(": ").append(e.what()), rank);
  }

  if (rank == 0) {
    if (last_eval_step != step - 1) run_evaluation(step - 1, epoch);
    reporter.send(ExtraRecord{"controller_decision_s", decision_s});
    reporter.send(ExtraRecord{"controller_overhead", train_s > 0 ? decision_s / train_s : 0.0});
    reporter.send(ExtraRecord{"training_time_s", train_s});
    reporter.send(ExtraRecord{"evaluation_time_s", eval_s});
    reporter.send(ExtraRecord{"parameters", static_cast<double>(n_params)});
    reporter.send(ExtraRecord{"time_to_target_s", time_to_target.value_or(-1.0)});
    // Steps to target, so that "faster steps" and "fewer steps" can be told apart.
    if (steps_to_target >= 0) reporter.send(ExtraRecord{"steps_to_target", static_cast<double>(steps_to_target)});
  }
  reporter.send(DoneRecord{reason});
  return 0;
}

}  // namespace

int run_bsp_worker(const WorkerOptions& options) {
  try {
    return run(options);
  } catch (const std::exception& e) {
    return fail(e.what(), options.rank);
  }
}

}  // namespace omnilearn::emulator::worker
