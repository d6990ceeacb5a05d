// PipelineSchedule: the order in which each pipeline stage runs the forward and backward passes of one step's
// micro-batches: GPipe (all forwards, then all backwards), 1F1B (PipeDream-Flush, Megatron-LM's default) and
// interleaved 1F1B with v model chunks per stage (Megatron-LM's order). The simulator's hybrid driver and the
// testbed's pipeline stages both run these orders. Pure functions of their arguments: thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::hybrid {

enum class ScheduleKind { kGPipe, kOneFOneB, kInterleaved };

// `chunks` (v): model chunks per stage; 1 for GPipe and 1F1B, >= 2 for interleaved. Virtual stage
// chunk x stages + stage holds the chunk-th of a stage's pieces (Megatron-LM's numbering).
struct PipelineSchedule {
  ScheduleKind kind = ScheduleKind::kOneFOneB;
  std::int64_t chunks = 1;
};

enum class PassKind : std::uint8_t { kForward, kBackward };

// One pass of one micro-batch through one of a stage's chunks.
struct PipelineOp {
  PassKind pass = PassKind::kForward;
  std::int64_t micro_batch = 0;
  std::int64_t chunk = 0;
  bool operator==(const PipelineOp&) const = default;
};

// "gpipe", "1f1b", "interleaved"; parse_schedule_kind's error names the accepted values.
const char* schedule_name(ScheduleKind kind);
Result<ScheduleKind> parse_schedule_kind(std::string_view name);

// Whether `schedule` can run `micro_batches` micro-batches over `stages` stages: stages and micro-batches >= 1;
// chunks == 1 unless interleaved; interleaved needs chunks >= 2 and micro-batches a multiple of stages (as
// Megatron-LM requires). The error names the field.
Status validate_schedule(const PipelineSchedule& schedule, std::int64_t stages, std::int64_t micro_batches);

// The passes stage `stage` (0-based, < stages) runs in one step, in order: every micro-batch's forward and backward
// through each of its chunks once. GPipe: forwards 0..m-1 then backwards 0..m-1. 1F1B: min(stages - stage - 1, m)
// forwards, then a forward and a backward in turn, then the remaining backwards. Interleaved: Megatron-LM's
// warm-up of (stages - stage - 1) x 2 + (chunks - 1) x stages forwards (all of them when m == stages), then
// alternation; forward k runs chunk (k mod (stages x chunks)) / stages on micro-batch
// (k / (stages x chunks)) x stages + k mod stages, backward k the same micro-batch on the mirrored chunk.
Result<std::vector<PipelineOp>> stage_order(const PipelineSchedule& schedule, std::int64_t stages, std::int64_t stage,
                                            std::int64_t micro_batches);

}  // namespace omnilearn::hybrid
