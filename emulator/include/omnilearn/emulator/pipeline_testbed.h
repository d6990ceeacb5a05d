// The pipeline testbed (docs/testbed.md, "A pipeline under cgroup quotas"): an MLP cut into stages, each stage of
// each replica a worker process (`omnilearn-emulate-worker --pipeline-stage`) in its own cgroup, activations and
// gradients sent by Gloo, each stage running its schedule's order (hybrid::stage_order), replicas all-reducing each
// stage's gradients and splitting the micro-batches by the OmniLearn controller. The run is measured against
// hybrid::run_pipeline fed with the same run's calibration. One run at a time per process (it installs SIGINT/SIGTERM
// handlers while it runs); the types are plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/emulator/launch_environment.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/hybrid/pipeline_schedule.h"

namespace omnilearn::emulator {

// The controller that splits the micro-batches between replicas (replicas > 1): controller::Controller with one
// worker per replica, batch = micro-batches, global batch = PipelineTestbedSpec::micro_batches.
struct PipelineControllerSpec {
  std::string policy = "omnilearn";  // a name of controller::make_default_registry()
  std::int64_t every_n = 5;          // steps between decisions
  double dead_band = 0.05;
  double ewma_alpha = 0.3;
};

struct PipelineTestbedSpec {
  std::string name = "pipeline";
  std::int64_t stages = 4;
  std::int64_t replicas = 1;
  // The MLP: widths[0] inputs, then one Linear layer (+ ReLU but the last) per following width; the last width is
  // the number of classes of the cross-entropy loss. Layers: widths.size() - 1.
  std::vector<std::int64_t> widths;
  std::vector<std::int64_t> layers_per_stage;  // per stage, summing to the layers; each >= 1
  // CPU cores per (replica, stage), replica-major (index replica x stages + stage); each in (0, 1].
  std::vector<double> shares;
  std::int64_t micro_batch_size = 16;  // samples per micro-batch
  // Micro-batches per step over all replicas; each replica starts with an equal part (remainder to the lowest).
  std::int64_t micro_batches = 8;
  hybrid::PipelineSchedule schedule;  // 1F1B by default; GPipe too (interleaved is refused: one chunk per stage)
  std::int64_t steps = 60;            // measured steps
  std::int64_t warmup_steps = 3;      // run before them, in no statistic
  std::int64_t window = 20;           // steps per window of the worst-window error
  std::uint64_t seed = 1;             // weights and data
  double learning_rate = 0.01;
  // The CFS period of every stage's quota: shortened from the kernel's 100 ms, not modelled. A pass costs a few
  // milliseconds; under a 100 ms period a throttled stage would run a burst of passes and stall for the rest of the
  // period, which the simulator (a pass takes CPU / share) does not know. Shorter is not better without end: each
  // period's unthrottle must preempt whatever else runs, and at 5 ms a busy stage at half a core took 1.23x its
  // CPU / share on this 2-core host beside other builds (docs/testbed.md, "A pipeline under cgroup quotas").
  double cpu_period_s = 0.020;
  std::int64_t calibration_reps = 15;  // timed passes per stage at a full core (after 3 untimed)
  double stall_timeout_s = 60.0;       // no record from a stage for this long after the start stops the run
  PipelineControllerSpec controller;
};

// The layers' count, each stage's first layer, and the share of (replica, stage).
std::int64_t pipeline_layers(const PipelineTestbedSpec& spec);
std::int64_t stage_first_layer(const PipelineTestbedSpec& spec, std::int64_t stage);
double stage_share(const PipelineTestbedSpec& spec, std::int64_t replica, std::int64_t stage);

// Checks every field; `host_cpus` bounds the sum of the shares. The error names the field.
Status validate_pipeline_spec(const PipelineTestbedSpec& spec, int host_cpus);

// What the stages measured before the quotas: each pass of one micro-batch at a full core, the transfers, the
// collectives. Index of per-stage vectors: replica x stages + stage.
struct PipelineCalibration {
  std::vector<Seconds> forward_s;
  std::vector<Seconds> backward_s;
  std::vector<Seconds> update_s;         // the stage's optimizer step
  std::vector<Seconds> send_forward_s;   // per boundary s -> s + 1 (stages - 1): one activation, one way
  std::vector<Seconds> send_backward_s;  // per boundary s + 1 -> s: one gradient
  Seconds allreduce_s = 0.0;             // the slowest stage group's gradient all-reduce (replicas > 1)
  Seconds sync_s = 0.0;                  // the step's closing all-reduce over every process
};

// One step, measured or predicted.
struct PipelineStepRecord {
  std::int64_t step = 0;
  Seconds step_s = 0.0;                      // the whole step: pipeline, all-reduce, update, closing sync
  std::vector<Seconds> replica_s;            // per replica: from the step's start to its stages' last backward
  std::vector<std::int64_t> micro_batches;   // per replica
};

// One stage's share of a measured step.
struct StageStepRecord {
  std::int64_t step = 0;
  std::int64_t replica = 0;
  std::int64_t stage = 0;
  Seconds compute_s = 0.0;  // its passes and its update
  Seconds wait_s = 0.0;     // blocked on receives, sends and collectives
};

// Measured against predicted, over the steps after the warm-up. Errors are (measured - predicted) / predicted.
struct PipelineComparison {
  Seconds measured_mean_s = 0.0;
  Seconds predicted_mean_s = 0.0;
  double mean_error = 0.0;
  double worst_window_error = 0.0;  // the largest |error| of a window's mean step (same steps in both)
  std::int64_t worst_window_first_step = 0;
  std::int64_t window = 0;          // the steps per window (fewer when the run is shorter)
  std::vector<double> measured_micro_batches;   // per replica, the mean share of the micro-batches
  std::vector<double> predicted_micro_batches;
};

struct PipelineTestbedResult {
  RunOutcome outcome = RunOutcome::kCompleted;
  int exit_code = 0;    // 0, 1 (a stage failed or stalled), 130 (SIGINT), 143 (SIGTERM)
  std::string message;  // what went wrong, naming the stage
  PipelineCalibration calibration;
  std::vector<PipelineStepRecord> measured;   // complete only when outcome is kCompleted
  std::vector<PipelineStepRecord> predicted;
  std::vector<StageStepRecord> stage_steps;
  PipelineComparison comparison;
};

struct PipelineLaunchOptions {
  std::shared_ptr<LaunchEnvironment> environment;  // null: HostLaunchEnvironment (the installed worker program)
  std::function<void(const std::string&)> log;     // progress lines; default stderr
};

// Runs `spec` on this host and writes into `out_dir` (made if missing): pipeline.json (the spec every stage reads),
// calibration.csv, steps.csv (measured and predicted), stages.csv, timeline.csv (every stage's passes, receives and
// sends on CLOCK_MONOTONIC: rank, step, event, micro_batch, begin_s, end_s, cpu_s) and validation.json (the
// comparison). An error
// means nothing was started (a bad spec, no cgroup access, no worker program); once stages run, every outcome comes
// back in the result, and no process or cgroup of the run is left behind.
Result<PipelineTestbedResult> run_pipeline_testbed(const PipelineTestbedSpec& spec, const std::string& out_dir,
                                                   const PipelineLaunchOptions& options = {});

// A completed run's folder read back: its spec (pipeline.json) and its steps (steps.csv), compared again
// (pipeline_prediction.h), validation.json rewritten. What `omnilearn validate RUN` checks. An error names the file.
struct PipelineRunCheck {
  PipelineTestbedSpec spec;
  PipelineComparison comparison;
};
Result<PipelineRunCheck> check_pipeline_run(const std::string& run_dir);

}  // namespace omnilearn::emulator
