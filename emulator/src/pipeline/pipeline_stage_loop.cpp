#include "omnilearn/emulator/pipeline_stage_loop.h"

#include <chrono>
#include <string>

namespace omnilearn::emulator {
namespace {

using Clock = std::chrono::steady_clock;

// Calls `f` and adds its wall time to `total`.
template <typename F>
Status timed(Seconds& total, F&& f) {
  const auto t0 = Clock::now();
  Status s = f();
  total += std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

}  // namespace

Result<StageStepTimes> run_stage_passes(const std::vector<hybrid::PipelineOp>& order, std::int64_t stage,
                                        std::int64_t stages, StageOps& ops) {
  const bool first = stage == 0;
  const bool last = stage == stages - 1;
  StageStepTimes t;
  const auto t0 = Clock::now();
  std::int64_t micro_batches = 0;
  for (const hybrid::PipelineOp& op : order) micro_batches += op.pass == hybrid::PassKind::kForward ? 1 : 0;
  OMNI_RETURN_IF_ERROR(timed(t.wait_s, [&] { return ops.post_receives(micro_batches); }));
  for (const hybrid::PipelineOp& op : order) {
    const std::int64_t mb = op.micro_batch;
    Status s;
    if (op.pass == hybrid::PassKind::kForward) {
      if (!first) s = timed(t.wait_s, [&] { return ops.receive_activation(mb); });
      if (s.is_ok()) s = timed(t.compute_s, [&] { return ops.forward(mb); });
      if (s.is_ok() && !last) s = timed(t.wait_s, [&] { return ops.send_activation(mb); });
    } else {
      if (!last) s = timed(t.wait_s, [&] { return ops.receive_gradient(mb); });
      if (s.is_ok()) s = timed(t.compute_s, [&] { return ops.backward(mb); });
      if (s.is_ok() && !first) s = timed(t.wait_s, [&] { return ops.send_gradient(mb); });
    }
    if (!s.is_ok()) {
      return s.with_context(std::string(op.pass == hybrid::PassKind::kForward ? "forward" : "backward") +
                            " of micro-batch " + std::to_string(mb) + " on stage " + std::to_string(stage));
    }
  }
  OMNI_RETURN_IF_ERROR(timed(t.wait_s, [&] { return ops.finish_sends(); }));
  t.pipeline_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

}  // namespace omnilearn::emulator
