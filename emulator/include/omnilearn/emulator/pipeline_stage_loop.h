// The passes one pipeline stage runs in a step, in its schedule's order (hybrid::stage_order), behind the seam
// StageOps: the worker's is LibTorch and Gloo (emulator/worker/pipeline_stage.cpp), tests use in-process fakes.
// Sends do not wait (as run_pipeline models them); receives block; the step ends once every send has been delivered.
// With sends that do not wait, 1F1B and GPipe never deadlock: each stage's receives come in the order its
// neighbour sends. Not thread-safe: one StageOps per stage thread.
#pragma once

#include <cstdint>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/hybrid/pipeline_schedule.h"

namespace omnilearn::emulator {

class StageOps {
 public:
  virtual ~StageOps() = default;
  // Posts the step's receives before its first pass, so that each transfer starts when its sender sends (as
  // run_pipeline models it), not when this stage asks for it. By default receives are posted when called.
  virtual Status post_receives(std::int64_t /*micro_batches*/) { return Status::ok(); }
  virtual Status receive_activation(std::int64_t micro_batch) = 0;  // from the previous stage; blocks
  virtual Status forward(std::int64_t micro_batch) = 0;
  virtual Status send_activation(std::int64_t micro_batch) = 0;     // to the next stage; does not wait
  virtual Status receive_gradient(std::int64_t micro_batch) = 0;    // from the next stage; blocks
  virtual Status backward(std::int64_t micro_batch) = 0;            // the last stage's starts from the loss
  virtual Status send_gradient(std::int64_t micro_batch) = 0;       // to the previous stage; does not wait
  virtual Status finish_sends() = 0;                                // waits until this step's sends are delivered
};

struct StageStepTimes {
  Seconds compute_s = 0.0;   // in forward() and backward()
  Seconds wait_s = 0.0;      // in receives, sends and finish_sends()
  Seconds pipeline_s = 0.0;  // from the call to the end of finish_sends()
};

// Runs `order` (stage `stage` of `stages`): a forward receives its input unless it is the first stage and sends its
// output unless it is the last; a backward receives its gradient unless it is the last stage and sends the input's
// gradient unless it is the first. The first error stops the step and is returned, naming the pass.
Result<StageStepTimes> run_stage_passes(const std::vector<hybrid::PipelineOp>& order, std::int64_t stage,
                                        std::int64_t stages, StageOps& ops);

}  // namespace omnilearn::emulator
