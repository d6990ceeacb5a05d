// The pipeline testbed's prediction and its comparison with a run (pipeline_testbed.h): hybrid::run_pipeline fed
// with one run's calibration, each pass's CPU seconds run through its stage's CPU quota period by period
// (StageQuota), and the same controller as the stages run when there are several replicas. Functions are pure
// (thread-safe); a StageQuota is a plain value.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/emulator/pipeline_testbed.h"
#include "omnilearn/hybrid/pipeline_step.h"

namespace omnilearn::emulator {

// The controller every stage process and the prediction run (replicas = workers, micro-batches = batches).
Result<controller::Controller> make_pipeline_controller(const PipelineTestbedSpec& spec);

// A stage under its CFS quota (cgroup v1 cpu.cfs_quota_us, no burst): in each period [k P, (k + 1) P) it may use
// share x P seconds of CPU, at full speed while some is left; what a period leaves unused is lost. The launcher sets
// every quota at once, so every stage's periods are taken to start at time 0. Calls must come in time order.
class StageQuota {
 public:
  StageQuota(double share, Seconds period_s) : quota_s_(share * period_s), period_s_(period_s) {}
  // When `cpu_s` seconds of CPU, ready at `start_s`, are done.
  Seconds run(Seconds start_s, Seconds cpu_s);

 private:
  Seconds quota_s_, period_s_;
  std::int64_t period_ = -1;  // the period used_s_ counts in
  Seconds used_s_ = 0.0;
};

// Replica `replica`'s passes as calibrated (CPU seconds under its quotas, run_pipeline's durations at full speed;
// StageQuota makes them wall time) and its transfers as calibrated.
Result<hybrid::ReplicaTimes> calibrated_replica_times(const PipelineTestbedSpec& spec,
                                                      const PipelineCalibration& calibration, std::int64_t replica);

// Every step of the run (warm-up included) as the simulator predicts it: each replica's step by run_pipeline at
// the micro-batches in force, each pass's calibrated CPU seconds timed by its stage's StageQuota (carried from step
// to step), plus each stage's update after its last backward, plus the gradient all-reduce (replicas > 1) and the
// closing sync; the replicas' step times are fed to the controller as the stages feed it.
Result<std::vector<PipelineStepRecord>> predict_pipeline_steps(const PipelineTestbedSpec& spec,
                                                               const PipelineCalibration& calibration);

// The bars a run is judged by (docs/testbed.md, "A pipeline under cgroup quotas").
struct PipelineBars {
  double mean_error = 0.05;           // |mean-step error|
  double window_error = 0.10;         // |worst window's error|
  double split_micro_batches = 0.5;   // |measured - predicted| mean micro-batches of each replica
};
struct PipelineVerdict {
  bool mean_ok = false;
  bool window_ok = false;
  bool split_ok = false;  // true with one replica (nothing to split)
  bool all() const { return mean_ok && window_ok && split_ok; }
};
PipelineVerdict judge_pipeline(const PipelineComparison& comparison, const PipelineBars& bars = {});

// Measured against predicted over the steps after spec.warmup_steps (matched by step number).
PipelineComparison compare_pipeline(const PipelineTestbedSpec& spec, const std::vector<PipelineStepRecord>& measured,
                                    const std::vector<PipelineStepRecord>& predicted);

}  // namespace omnilearn::emulator
