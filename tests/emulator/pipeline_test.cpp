// The pipeline testbed's Torch-free parts: the stage loop over in-process fake links with a fake throttle (each pass
// sleeps its CPU cost over its share), the prediction, the comparison, the spec checks and the protocol.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "omnilearn/emulator/pipeline_prediction.h"
#include "omnilearn/emulator/pipeline_protocol.h"
#include "omnilearn/emulator/pipeline_stage_loop.h"

namespace omnilearn::emulator {
namespace {

using hybrid::PassKind;

// Messages between stages of one process: (from, to, backward, micro-batch) -> delivered.
class FakeLinks {
 public:
  void send(std::int64_t from, std::int64_t to, bool backward, std::int64_t mb) {
    std::lock_guard<std::mutex> lock(mu_);
    box_[{from, to, backward ? 1 : 0, mb}] = true;
    cv_.notify_all();
  }
  // Waits up to 5 s: a deadlock becomes an error, not a hung test.
  Status receive(std::int64_t from, std::int64_t to, bool backward, std::int64_t mb) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto key = std::make_tuple(from, to, backward ? 1 : 0, mb);
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return box_.count(key) > 0; })) {
      return Status::internal("deadlock: stage " + std::to_string(to) + " waited 5 s");
    }
    box_.erase(key);
    return Status::ok();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::tuple<std::int64_t, std::int64_t, int, std::int64_t>, bool> box_;
};

// A stage whose passes sleep cost / share (the fake throttle) and whose links are FakeLinks; it records its passes.
class FakeStage final : public StageOps {
 public:
  FakeStage(FakeLinks& links, std::int64_t stage, double forward_s, double backward_s, double share)
      : links_(links), stage_(stage), forward_s_(forward_s / share), backward_s_(backward_s / share) {}
  Status post_receives(std::int64_t micro_batches) override { return posted_.push_back(micro_batches), Status::ok(); }
  Status receive_activation(std::int64_t mb) override { return links_.receive(stage_ - 1, stage_, false, mb); }
  Status forward(std::int64_t mb) override { return pass({PassKind::kForward, mb, 0}, forward_s_); }
  Status send_activation(std::int64_t mb) override { return links_.send(stage_, stage_ + 1, false, mb), Status::ok(); }
  Status receive_gradient(std::int64_t mb) override { return links_.receive(stage_ + 1, stage_, true, mb); }
  Status backward(std::int64_t mb) override { return pass({PassKind::kBackward, mb, 0}, backward_s_); }
  Status send_gradient(std::int64_t mb) override { return links_.send(stage_, stage_ - 1, true, mb), Status::ok(); }
  Status finish_sends() override { return Status::ok(); }
  const std::vector<hybrid::PipelineOp>& ran() const { return ran_; }
  const std::vector<std::int64_t>& posted() const { return posted_; }

 private:
  Status pass(hybrid::PipelineOp op, double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    ran_.push_back(op);
    return Status::ok();
  }
  FakeLinks& links_;
  std::int64_t stage_;
  double forward_s_, backward_s_;
  std::vector<hybrid::PipelineOp> ran_;
  std::vector<std::int64_t> posted_;  // post_receives() calls, before any pass
};

struct LoopRun {
  std::vector<Status> status;
  std::vector<StageStepTimes> times;
  std::vector<std::vector<hybrid::PipelineOp>> ran, expected;
  std::vector<std::vector<std::int64_t>> posted;
  double wall_s = 0.0;
};

// Every stage of one replica in its own thread, running its stage_order.
LoopRun run_stages(hybrid::ScheduleKind kind, std::int64_t stages, std::int64_t m, double f, double b,
                   const std::vector<double>& shares) {
  FakeLinks links;
  LoopRun run;
  run.status.resize(static_cast<std::size_t>(stages));
  run.times.resize(static_cast<std::size_t>(stages));
  std::vector<std::unique_ptr<FakeStage>> ops;
  for (std::int64_t s = 0; s < stages; ++s) {
    ops.push_back(std::make_unique<FakeStage>(links, s, f, b, shares[static_cast<std::size_t>(s)]));
    run.expected.push_back(*hybrid::stage_order({kind, 1}, stages, s, m));
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (std::int64_t s = 0; s < stages; ++s) {
    threads.emplace_back([&, s] {
      const auto k = static_cast<std::size_t>(s);
      auto t = run_stage_passes(run.expected[k], s, stages, *ops[k]);
      run.status[k] = t.status();
      if (t) run.times[k] = *t;
    });
  }
  for (auto& t : threads) t.join();
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& o : ops) run.ran.push_back(o->ran()), run.posted.push_back(o->posted());
  return run;
}

TEST(PipelineStageLoop, OneFOneBNeverDeadlocksWithTwoAndFourStages) {
  for (const auto kind : {hybrid::ScheduleKind::kOneFOneB, hybrid::ScheduleKind::kGPipe}) {
    for (const std::int64_t stages : {2, 4}) {
      for (const std::int64_t m : {1, 3, 8}) {
        SCOPED_TRACE(std::string(hybrid::schedule_name(kind)) + ", stages " + std::to_string(stages) + ", m " + std::to_string(m));
        const LoopRun run = run_stages(kind, stages, m, 0.0005, 0.001, std::vector<double>(4, 1.0));
        for (std::int64_t s = 0; s < stages; ++s) {
          const auto k = static_cast<std::size_t>(s);
          ASSERT_TRUE(run.status[k].is_ok()) << run.status[k].message();
          EXPECT_EQ(run.ran[k], run.expected[k]);  // each stage ran its schedule's order, every pass once
          EXPECT_EQ(run.posted[k], std::vector<std::int64_t>{m});  // the step's receives posted once, up front
        }
      }
    }
  }
}

// The fake throttle's step against run_pipeline's makespan for the same times: the loop adds no waits of its own.
TEST(PipelineStageLoop, StepMatchesTheEventSimulation) {
  const std::vector<double> shares = {0.5, 0.5, 0.25, 0.5};
  const double f = 0.002, b = 0.004;
  const LoopRun run = run_stages(hybrid::ScheduleKind::kOneFOneB, 4, 8, f, b, shares);
  hybrid::ReplicaTimes times;
  for (const double s : shares) times.forward_s.push_back(f / s), times.backward_s.push_back(b / s);
  times.send_forward_s.assign(3, 0.0);
  times.send_backward_s.assign(3, 0.0);
  auto sim = hybrid::run_pipeline({hybrid::ScheduleKind::kOneFOneB, 1}, 8, times);
  ASSERT_TRUE(sim.is_ok());
  std::printf("fake 4-stage step: %.4f s, simulated %.4f s\n", run.wall_s, sim->makespan_s);
  EXPECT_GE(run.wall_s, 0.98 * sim->makespan_s);
  EXPECT_LE(run.wall_s, 1.5 * sim->makespan_s);  // sleeps overshoot on a busy host, never undershoot
  EXPECT_NEAR(run.times[2].compute_s, 8 * (f + b) / 0.25, 0.5 * 8 * (f + b) / 0.25);
}

PipelineTestbedSpec four_stages() {
  PipelineTestbedSpec s;
  s.widths = {8, 8, 8, 8, 4};
  s.layers_per_stage = {1, 1, 1, 1};
  s.shares = {0.5, 0.5, 0.25, 0.5};
  s.steps = 10;
  s.warmup_steps = 2;
  return s;
}

PipelineCalibration equal_calibration(std::size_t processes, std::size_t stages) {
  PipelineCalibration c;
  c.forward_s.assign(processes, 0.001);
  c.backward_s.assign(processes, 0.002);
  c.update_s.assign(processes, 0.0005);
  c.send_forward_s.assign(stages - 1, 0.0);
  c.send_backward_s.assign(stages - 1, 0.0);
  c.sync_s = 0.0001;
  return c;
}

// A quota period much shorter than a pass: each stage runs at its share, and the step is the closed form.
TEST(PipelinePrediction, OneReplicaOfEqualStagesIsTheClosedForm) {
  PipelineTestbedSpec spec = four_stages();
  spec.shares = {0.5, 0.5, 0.5, 0.5};
  spec.cpu_period_s = 1e-5;
  auto steps = predict_pipeline_steps(spec, equal_calibration(4, 4));
  ASSERT_TRUE(steps.is_ok()) << steps.status().message();
  ASSERT_EQ(steps->size(), 12u);
  // 1F1B with equal stages and free transfers: (m + S - 1)(f + b); then the update and the closing sync. Each
  // pass may end up to one period late.
  const double expected = (8 + 4 - 1) * (0.003 / 0.5) + 0.0005 / 0.5 + 0.0001;
  for (const auto& s : *steps) EXPECT_NEAR(s.step_s, expected, 30 * spec.cpu_period_s);
}

// A quarter core in 20 ms periods: 5 ms of CPU per period at full speed, the rest of the period throttled.
TEST(PipelinePrediction, StageQuotaRunsAtFullSpeedUntilThePeriodsQuotaIsSpent) {
  StageQuota q(/*share=*/0.25, /*period_s=*/0.02);
  EXPECT_NEAR(q.run(0.0, 0.004), 0.004, 1e-12);      // within the first period's 5 ms
  EXPECT_NEAR(q.run(0.004, 0.004), 0.023, 1e-12);    // 1 ms left, throttled to 20 ms, 3 ms more
  EXPECT_NEAR(q.run(0.1, 0.012), 0.142, 1e-12);      // idle since: 5 + 5 + 2 ms over three periods
  EXPECT_NEAR(q.run(1.0, 0.05), 1.185, 1e-12);       // busy: CPU / share less the last period's throttled part
}

TEST(PipelinePrediction, ControllerSplitsTwoToOneForAHalfShareReplica) {
  PipelineTestbedSpec spec = four_stages();
  spec.stages = 2, spec.replicas = 2, spec.widths = {8, 8, 4}, spec.layers_per_stage = {1, 1};
  spec.shares = {0.5, 0.5, 0.25, 0.25};
  spec.micro_batches = 12;
  spec.steps = 40;
  auto steps = predict_pipeline_steps(spec, equal_calibration(4, 2));
  ASSERT_TRUE(steps.is_ok()) << steps.status().message();
  EXPECT_EQ(steps->front().micro_batches, (std::vector<std::int64_t>{6, 6}));
  const auto& last = steps->back().micro_batches;
  EXPECT_EQ(last[0] + last[1], 12);
  EXPECT_GE(static_cast<double>(last[0]) / static_cast<double>(last[1]), 1.5);
  EXPECT_LE(static_cast<double>(last[0]) / static_cast<double>(last[1]), 3.0);
  EXPECT_LT(steps->back().step_s, steps->front().step_s);
}

TEST(PipelineComparison, MeanAndWorstWindow) {
  PipelineTestbedSpec spec = four_stages();
  spec.window = 3;
  std::vector<PipelineStepRecord> measured, predicted;
  for (std::int64_t k = 0; k < 12; ++k) {
    predicted.push_back({k, 1.0, {1.0}, {8}});
    measured.push_back({k, k >= 8 ? 1.3 : 1.0, {1.0}, {8}});  // steps 0-1 are the warm-up
  }
  const PipelineComparison c = compare_pipeline(spec, measured, predicted);
  EXPECT_NEAR(c.mean_error, 4 * 0.3 / 10, 1e-12);
  EXPECT_NEAR(c.worst_window_error, 0.3, 1e-12);
  EXPECT_EQ(c.worst_window_first_step, 8);
  EXPECT_EQ(c.window, 3);
  EXPECT_EQ(c.measured_micro_batches, std::vector<double>{8.0});
}

TEST(PipelineSpec, ChecksNameTheField) {
  PipelineTestbedSpec spec = four_stages();
  EXPECT_TRUE(validate_pipeline_spec(spec, 2).is_ok());
  spec.layers_per_stage = {1, 1, 1, 2};
  EXPECT_NE(validate_pipeline_spec(spec, 2).message().find("layers_per_stage"), std::string::npos);
  spec = four_stages();
  spec.shares.pop_back();
  EXPECT_NE(validate_pipeline_spec(spec, 2).message().find("shares"), std::string::npos);
  spec = four_stages();
  EXPECT_NE(validate_pipeline_spec(spec, 1).message().find("cores"), std::string::npos);
  spec.schedule = {hybrid::ScheduleKind::kInterleaved, 2};
  EXPECT_FALSE(validate_pipeline_spec(spec, 2).is_ok());
  EXPECT_EQ(stage_first_layer(four_stages(), 2), 2);
}

TEST(PipelineProtocol, ReportsAndConfigRoundTrip) {
  const StageReport step = StageStepReport{3, 7, 0.25, 0.5, 0.8, {0.7, 0.6}, {8, 4}};
  auto back = decode_stage_report(encode_stage_report(step));
  ASSERT_TRUE(back.is_ok());
  const auto& s = std::get<StageStepReport>(*back);
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.micro_batches, (std::vector<std::int64_t>{8, 4}));
  EXPECT_DOUBLE_EQ(s.replica_s[1], 0.6);
  EXPECT_FALSE(decode_stage_report("{\"type\": \"nope\"}").is_ok());
  EXPECT_FALSE(decode_stage_report("not json").is_ok());
  const auto path = std::filesystem::temp_directory_path() / ("pipeline-config-" + std::to_string(::getpid()) + ".json");
  PipelineTestbedSpec spec = four_stages();
  spec.controller.every_n = 7;
  ASSERT_TRUE(write_pipeline_config({spec, "/tmp/x"}, path.string()).is_ok());
  auto read = read_pipeline_config(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(read.is_ok()) << read.status().message();
  EXPECT_EQ(read->spec.widths, spec.widths);
  EXPECT_EQ(read->spec.controller.every_n, 7);
  EXPECT_EQ(read->store_file, "/tmp/x");
}

}  // namespace
}  // namespace omnilearn::emulator
