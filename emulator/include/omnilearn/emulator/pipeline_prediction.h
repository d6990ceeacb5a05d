// The pipeline testbed's prediction and its comparison with a run (pipeline_testbed.h): hybrid::run_pipeline fed
// with one run's calibration, each pass's full-core seconds divided by its stage's share, and the same controller
// as the stages run when there are several replicas. Pure functions (thread-safe).
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

// Replica `replica`'s pass and transfer seconds under its quotas: calibration / share; transfers as calibrated.
Result<hybrid::ReplicaTimes> throttled_replica_times(const PipelineTestbedSpec& spec,
                                                     const PipelineCalibration& calibration, std::int64_t replica);

// Every step of the run (warm-up included) as the simulator predicts it: each replica's step by run_pipeline at
// the micro-batches in force, plus each stage's update after its last backward, plus the gradient all-reduce
// (replicas > 1) and the closing sync; the replicas' step times are fed to the controller as the stages feed it.
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
