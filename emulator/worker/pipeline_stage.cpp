// The `--pipeline-stage` role (LibTorch, Gloo): one stage of one replica of the pipeline testbed
// (omnilearn/emulator/pipeline_testbed.h). Rendezvous through the run's FileStore into three kinds of Gloo group
// (all processes; the replica's stages; the stage's replicas), their threads moved out of the CPU quota; a
// calibration under the stage's quota, every stage at once as they run; then, once the launcher says go, the steps:
// the schedule's passes (run_stage_passes), the stage's gradient all-reduce over its replicas, the update, and a
// closing MAX all-reduce of the replicas' pipeline times that every process feeds to the same controller.
#include <time.h>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/emulator/pipeline_prediction.h"
#include "omnilearn/emulator/pipeline_protocol.h"
#include "omnilearn/emulator/thread_groups.h"
#include "pipeline_stage_ops.h"
#include "worker_io.h"
#include "worker_options.h"

namespace omnilearn::emulator::worker {
namespace {

using Clock = std::chrono::steady_clock;
using Group = c10::intrusive_ptr<c10d::ProcessGroupGloo>;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class PipelineStage {
 public:
  PipelineStage(const PipelineStageOptions& o, PipelineStageConfig c)
      : o_(o), c_(std::move(c)), spec_(c_.spec), rank_(o.rank), replica_(o.rank / spec_.stages),
        stage_(o.rank % spec_.stages), world_(spec_.stages * spec_.replicas), reporter_(o.out_fd) {}

  Status run() {
    at::set_num_threads(1);
    OMNI_RETURN_IF_ERROR(rendezvous());
    ops_.emplace(spec_, stage_, pipe_);
    ops_->set_loss_scale(1.0 / static_cast<double>(spec_.micro_batches));
    OMNI_RETURN_IF_ERROR(calibrate());
    std::string pending, line;
    if (!read_line(o_.in_fd, pending, line) || line != kPipelineGo) return Status::internal("the launcher said no go");
    OMNI_RETURN_IF_ERROR(train());
    reporter_.send_line(encode_stage_report(StageDoneReport{rank_}));
    return Status::ok();
  }

 private:
  Group make_group(const std::string& prefix, std::int64_t rank, std::int64_t size) {
    auto opts = c10d::ProcessGroupGloo::Options::create(
        std::chrono::milliseconds(static_cast<long long>(std::max(10.0, 2.0 * spec_.stall_timeout_s) * 1000.0)));
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    auto store = c10::make_intrusive<c10d::PrefixStore>(prefix, store_);
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, static_cast<int>(rank), static_cast<int>(size), opts);
  }

  Status rendezvous() try {
    const std::vector<pid_t> before = own_thread_ids();
    store_ = c10::make_intrusive<c10d::FileStore>(c_.store_file, static_cast<int>(world_));
    all_ = make_group("all", rank_, world_);
    pipe_ = make_group("pipe" + std::to_string(replica_), stage_, spec_.stages);
    if (spec_.replicas > 1) replicas_ = make_group("dp" + std::to_string(stage_), replica_, spec_.replicas);
    // Gloo's threads run outside the quota: a transfer does not hold its stage (run_pipeline's model), and a
    // neighbour's receive is not delayed to this stage's next quota period.
    return move_new_threads(before, o_.comm_thread_files);
  } catch (const std::exception& e) {
    return Status::internal(std::string("rendezvous through ") + c_.store_file + " failed: " + e.what());
  }

  Status calibrate();
  Status calibrate_passes(StageCalibrationReport& r);
  Seconds ping_pong();
  Seconds time_allreduce(const Group& group, torch::Tensor t, int reps);
  Status train();
  Status write_timeline() const;
  Status step(controller::Controller& control, std::int64_t step, Clock::time_point& last_sync);

  const PipelineStageOptions& o_;
  const PipelineStageConfig c_;
  const PipelineTestbedSpec& spec_;
  const std::int64_t rank_, replica_, stage_, world_;
  Reporter reporter_;
  c10::intrusive_ptr<c10d::Store> store_;
  Group all_, pipe_, replicas_;
  std::optional<TorchStageOps> ops_;
};

// Each pass's CPU time under the stage's quota: the thread's CPU time, not the wall's, so that another process on
// the host does not count (the quota grants CPU time; the prediction divides it by the share).
Status PipelineStage::calibrate_passes(StageCalibrationReport& r) {
  std::vector<double> fwd, bwd, upd;
  for (std::int64_t i = 0; i < spec_.calibration_reps + 3; ++i) {
    if (stage_ > 0) ops_->set_input(0, ops_->sample_input());
    const double t0 = thread_cpu_s();
    OMNI_RETURN_IF_ERROR(ops_->forward(0));
    const double t1 = thread_cpu_s();
    if (stage_ < spec_.stages - 1) ops_->set_output_gradient(0, ops_->sample_gradient());
    const double t2 = thread_cpu_s();
    OMNI_RETURN_IF_ERROR(ops_->backward(0));
    const double t3 = thread_cpu_s();
    ops_->update(0.0);
    const double t4 = thread_cpu_s();
    if (i < 3) continue;
    fwd.push_back(t1 - t0), bwd.push_back(t3 - t2), upd.push_back(t4 - t3);
  }
  r.forward_s = median(fwd), r.backward_s = median(bwd), r.update_s = median(upd);
  return ops_->finish_sends();
}

// Replica 0's boundary stage -> stage + 1: an activation there and a gradient of its shape back, one way = half of
// the fastest round trip. Under the quotas a round trip may also wait for a throttled stage's next period; the
// steps' receives are posted ahead (pipeline_stage_loop.h), so a transfer there does not wait on its receiver.
Seconds PipelineStage::ping_pong() {
  constexpr int kReps = 12;
  std::vector<double> rtt;
  if (stage_ > 0) {  // answer the previous stage first
    for (int i = 0; i < kReps; ++i) {
      std::vector<torch::Tensor> buf{ops_->sample_input()};
      pipe_->recv(buf, static_cast<int>(stage_ - 1), 1000)->wait();
      pipe_->send(buf, static_cast<int>(stage_ - 1), 1001)->wait();
    }
  }
  if (stage_ == spec_.stages - 1) return -1.0;
  for (int i = 0; i < kReps; ++i) {
    std::vector<torch::Tensor> buf{ops_->sample_gradient()};
    const auto t0 = Clock::now();
    pipe_->send(buf, static_cast<int>(stage_ + 1), 1000)->wait();
    pipe_->recv(buf, static_cast<int>(stage_ + 1), 1001)->wait();
    if (i >= 2) rtt.push_back(seconds_since(t0));
  }
  return *std::min_element(rtt.begin(), rtt.end()) / 2.0;
}

Seconds PipelineStage::time_allreduce(const Group& group, torch::Tensor t, int reps) {
  std::vector<double> times;
  for (int i = 0; i < reps + 2; ++i) {
    std::vector<torch::Tensor> v{t};
    const auto t0 = Clock::now();
    group->allreduce(v)->wait();
    if (i >= 2) times.push_back(seconds_since(t0));
  }
  return median(times);
}

// Every stage at once, each under its quota, as in the steps; the transfers and collectives once all are done.
Status PipelineStage::calibrate() try {
  StageCalibrationReport r;
  r.rank = rank_;
  OMNI_RETURN_IF_ERROR(calibrate_passes(r));
  store_->set("cal/" + std::to_string(rank_), std::vector<std::uint8_t>{1});
  for (std::int64_t k = 0; k < world_; ++k) store_->wait({"cal/" + std::to_string(k)});
  if (replica_ == 0) r.send_forward_s = r.send_backward_s = ping_pong();
  r.sync_s = time_allreduce(all_, torch::zeros({spec_.replicas}), 7);
  if (replicas_) r.allreduce_s = time_allreduce(replicas_, ops_->flat_gradients(), 5);
  reporter_.send_line(encode_stage_report(r));
  return Status::ok();
} catch (const std::exception& e) {
  return Status::internal(std::string("calibration failed: ") + e.what());
}

Status PipelineStage::step(controller::Controller& control, std::int64_t step, Clock::time_point& last_sync) {
  ops_->set_step(step);
  const std::vector<BatchSize> plan = control.current_plan().batch;
  auto order = hybrid::stage_order(spec_.schedule, spec_.stages, stage_, plan[static_cast<std::size_t>(replica_)]);
  if (!order) return order.status();
  auto passes = run_stage_passes(*order, stage_, spec_.stages, *ops_);
  if (!passes) return passes.status();
  StageStepReport rep{rank_, step, passes->compute_s, passes->wait_s, 0.0, {}, plan};
  auto t0 = Clock::now();
  if (replicas_) {
    std::vector<torch::Tensor> flat{ops_->flat_gradients()};
    replicas_->allreduce(flat)->wait();
    ops_->set_gradients(flat[0]);
  }
  rep.wait_s += seconds_since(t0);
  t0 = Clock::now();
  ops_->update(spec_.learning_rate);
  rep.compute_s += seconds_since(t0);
  t0 = Clock::now();
  std::vector<torch::Tensor> times{torch::zeros({spec_.replicas}, torch::kDouble)};
  times[0][replica_] = passes->pipeline_s;
  c10d::AllreduceOptions max;
  max.reduceOp = c10d::ReduceOp::MAX;
  all_->allreduce(times, max)->wait();
  rep.wait_s += seconds_since(t0);
  rep.step_s = seconds_since(last_sync);
  last_sync = Clock::now();
  for (std::int64_t r = 0; r < spec_.replicas; ++r) rep.replica_s.push_back(times[0][r].item<double>());
  reporter_.send_line(encode_stage_report(rep));
  // Every process feeds the same all-reduced times to the same controller, so every one runs the same plan.
  for (std::int64_t r = 0; r < spec_.replicas; ++r) {
    const auto k = static_cast<std::size_t>(r);
    OMNI_RETURN_IF_ERROR(control.report(controller::IterationDone{static_cast<WorkerId>(r), step, static_cast<double>(step),
                                                                  rep.replica_s[k], plan[k]}));
  }
  auto next = control.plan_next({step + 1, 0, static_cast<double>(step + 1)});
  return next.is_ok() ? Status::ok() : next.status();
}

// The stage's timeline, beside pipeline.json; the launcher joins every stage's into timeline.csv.
Status PipelineStage::write_timeline() const {
  const std::string path = pipeline_timeline_part(std::filesystem::path(o_.config).parent_path().string(), rank_);
  std::ofstream f(path);
  f.precision(9);
  f << std::fixed;
  for (const auto& e : ops_->timeline()) {
    f << rank_ << ',' << e.step << ',' << e.what << ',' << e.micro_batch << ',' << e.begin_s << ',' << e.end_s << ','
      << e.cpu_s << '\n';
  }
  f.flush();
  return f ? Status::ok() : Status::io_error("cannot write " + path);
}

Status PipelineStage::train() try {
  auto control = make_pipeline_controller(spec_);
  if (!control) return control.status();
  std::vector<torch::Tensor> start{torch::zeros({1})};
  all_->allreduce(start)->wait();  // every stage starts the first step together
  auto last_sync = Clock::now();
  for (std::int64_t s = 0; s < spec_.warmup_steps + spec_.steps; ++s) {
    OMNI_RETURN_IF_ERROR(step(*control, s, last_sync).with_context("step " + std::to_string(s)));
  }
  OMNI_RETURN_IF_ERROR(write_timeline());
  return Status::ok();
} catch (const std::exception& e) {
  return Status::internal(std::string("training failed: ") + e.what());
}

}  // namespace

int run_pipeline_stage(const PipelineStageOptions& options) {
  auto config = read_pipeline_config(options.config);
  Status s = config.status();
  if (s.is_ok()) {
    if (options.rank < 0 || options.rank >= config->spec.stages * config->spec.replicas) {
      s = Status::invalid_argument("--rank " + std::to_string(options.rank) + " is not a stage of the run");
    } else {
      PipelineStage stage(options, std::move(config).value());
      s = stage.run();
    }
  }
  if (s.is_ok()) return 0;
  std::cerr << "omnilearn-emulate-worker (pipeline stage " << options.rank << "): " << s.message() << "\n";
  return 1;
}

}  // namespace omnilearn::emulator::worker
