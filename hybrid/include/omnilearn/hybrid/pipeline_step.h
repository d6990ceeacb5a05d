// run_pipeline(): one step of one pipeline replica as an event simulation. Each stage runs its passes in its
// schedule's order (pipeline_schedule.h); a pass starts when its stage is free and its input has arrived (the
// previous virtual stage's forward plus the activation's transfer, or the next virtual stage's backward plus the
// gradient's transfer; the last virtual stage's backward follows its own forward). Transfers do not hold the
// stage (asynchronous sends). Pure function: thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/hybrid/pipeline_schedule.h"

namespace omnilearn::hybrid {

// Seconds of one replica's passes and transfers for one micro-batch. Virtual stage j = chunk x stages + stage.
struct ReplicaTimes {
  std::vector<Seconds> forward_s;        // per virtual stage (stages x chunks)
  std::vector<Seconds> backward_s;       // per virtual stage
  std::vector<Seconds> send_forward_s;   // per boundary j -> j + 1 (stages x chunks - 1): the activation
  std::vector<Seconds> send_backward_s;  // per boundary j + 1 -> j: the gradient
};

// When one pass ran, for the timeline.
struct OpSpan {
  PipelineOp op;
  Seconds start_s = 0.0;
  Seconds end_s = 0.0;
};

// What one stage of the replica did in the step, from the step's start (0).
struct StageActivity {
  Seconds compute_s = 0.0;     // the passes' seconds
  Seconds first_start_s = 0.0;
  Seconds last_end_s = 0.0;    // its last backward's end
  Seconds send_s = 0.0;        // seconds its outgoing transfers took (overlapping its passes)
  std::vector<OpSpan> ops;     // kept only when asked
};

struct ReplicaStep {
  Seconds makespan_s = 0.0;  // the latest stage's last_end_s
  std::vector<StageActivity> stages;
};

// When a pass of `duration_s` (its time at full speed) that starts at `start_s` on virtual stage `stage` ends.
// run_pipeline calls it for each stage's passes in the order they run, with non-decreasing starts. Empty: start_s +
// duration_s. A stage whose speed varies within the step brings its own (the testbed's CPU quota periods,
// emulator/pipeline_prediction.h).
using PassClock = std::function<Seconds(std::size_t stage, Seconds start_s, Seconds duration_s)>;

// Simulates `micro_batches` micro-batches over stages = times.forward_s.size() / schedule.chunks. Errors name the
// field: sizes that do not match, a negative or non-finite time, an invalid schedule (validate_schedule()).
Result<ReplicaStep> run_pipeline(const PipelineSchedule& schedule, std::int64_t micro_batches,
                                 const ReplicaTimes& times, bool keep_ops = false, const PassClock& clock = {});

}  // namespace omnilearn::hybrid
