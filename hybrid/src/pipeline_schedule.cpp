#include "omnilearn/hybrid/pipeline_schedule.h"

#include <algorithm>
#include <string>

namespace omnilearn::hybrid {

const char* schedule_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe:
      return "gpipe";
    case ScheduleKind::kOneFOneB:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return "interleaved";
  }
  return "?";
}

Result<ScheduleKind> parse_schedule_kind(std::string_view name) {
  for (ScheduleKind k : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kInterleaved}) {
    if (name == schedule_name(k)) return k;
  }
  return Status::invalid_argument("schedule '" + std::string(name) + "' is not known; expected gpipe, 1f1b or interleaved");
}

Status validate_schedule(const PipelineSchedule& schedule, std::int64_t stages, std::int64_t micro_batches) {
  if (stages < 1) return Status::invalid_argument("pp (stages) must be >= 1, got " + std::to_string(stages));
  if (micro_batches < 1) {
    return Status::invalid_argument("micro-batches per replica must be >= 1, got " + std::to_string(micro_batches));
  }
  if (schedule.kind != ScheduleKind::kInterleaved) {
    if (schedule.chunks != 1) {
      return Status::invalid_argument(std::string("chunks must be 1 for schedule ") + schedule_name(schedule.kind) +
                                      ", got " + std::to_string(schedule.chunks));
    }
    return Status::ok();
  }
  if (schedule.chunks < 2) {
    return Status::invalid_argument("chunks must be >= 2 for schedule interleaved, got " +
                                    std::to_string(schedule.chunks));
  }
  if (micro_batches % stages != 0) {
    return Status::invalid_argument("interleaved needs micro-batches per replica (" + std::to_string(micro_batches) +
                                    ") to be a multiple of pp (" + std::to_string(stages) + ")");
  }
  return Status::ok();
}

namespace {

// Megatron-LM's interleaved order (schedules.py, forward_backward_pipelining_with_interleaving): the k-th forward
// or backward of a stage, of m x v in all.
PipelineOp interleaved_op(PassKind pass, std::int64_t k, std::int64_t stages, std::int64_t chunks) {
  const std::int64_t group = stages * chunks;
  std::int64_t chunk = (k % group) / stages;
  if (pass == PassKind::kBackward) chunk = chunks - 1 - chunk;
  return {pass, (k / group) * stages + k % stages, chunk};
}

}  // namespace

Result<std::vector<PipelineOp>> stage_order(const PipelineSchedule& schedule, std::int64_t stages, std::int64_t stage,
                                            std::int64_t micro_batches) {
  OMNI_RETURN_IF_ERROR(validate_schedule(schedule, stages, micro_batches));
  if (stage < 0 || stage >= stages) {
    return Status::invalid_argument("stage " + std::to_string(stage) + " is out of range [0, " +
                                    std::to_string(stages) + ")");
  }
  const std::int64_t m = micro_batches;
  std::vector<PipelineOp> ops;
  ops.reserve(static_cast<std::size_t>(2 * m * schedule.chunks));
  if (schedule.kind == ScheduleKind::kGPipe) {
    for (std::int64_t i = 0; i < m; ++i) ops.push_back({PassKind::kForward, i, 0});
    for (std::int64_t i = 0; i < m; ++i) ops.push_back({PassKind::kBackward, i, 0});
    return ops;
  }
  const std::int64_t total = m * schedule.chunks;
  std::int64_t warmup = 0;
  if (schedule.kind == ScheduleKind::kOneFOneB) {
    warmup = std::min(stages - stage - 1, total);
  } else {
    warmup = m == stages ? total : std::min((stages - stage - 1) * 2 + (schedule.chunks - 1) * stages, total);
  }
  auto op = [&](PassKind pass, std::int64_t k) -> PipelineOp {
    if (schedule.kind == ScheduleKind::kOneFOneB) return {pass, k, 0};
    return interleaved_op(pass, k, stages, schedule.chunks);
  };
  for (std::int64_t k = 0; k < warmup; ++k) ops.push_back(op(PassKind::kForward, k));
  for (std::int64_t k = 0; k < total - warmup; ++k) {
    ops.push_back(op(PassKind::kForward, warmup + k));
    ops.push_back(op(PassKind::kBackward, k));
  }
  for (std::int64_t k = total - warmup; k < total; ++k) ops.push_back(op(PassKind::kBackward, k));
  return ops;
}

}  // namespace omnilearn::hybrid
