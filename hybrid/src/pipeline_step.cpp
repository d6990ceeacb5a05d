#include "omnilearn/hybrid/pipeline_step.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace omnilearn::hybrid {

namespace {

Status check_times(const std::vector<Seconds>& v, std::size_t expected, const char* field) {
  if (v.size() != expected) {
    return Status::invalid_argument(std::string(field) + " has " + std::to_string(v.size()) + " entries, expected " +
                                    std::to_string(expected));
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || v[i] < 0.0) {
      return Status::invalid_argument(std::string(field) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                                      " is not a finite time >= 0");
    }
  }
  return Status::ok();
}

}  // namespace

Result<ReplicaStep> run_pipeline(const PipelineSchedule& schedule, std::int64_t micro_batches,
                                 const ReplicaTimes& times, bool keep_ops, const PassClock& clock) {
  const std::int64_t chunks = std::max<std::int64_t>(schedule.chunks, 1);
  const std::size_t virtual_stages = times.forward_s.size();
  if (virtual_stages == 0 || virtual_stages % static_cast<std::size_t>(chunks) != 0) {
    return Status::invalid_argument("forward_s has " + std::to_string(virtual_stages) +
                                    " virtual stages, expected a positive multiple of chunks (" +
                                    std::to_string(chunks) + ")");
  }
  const auto stages = static_cast<std::int64_t>(virtual_stages) / chunks;
  OMNI_RETURN_IF_ERROR(validate_schedule(schedule, stages, micro_batches));
  OMNI_RETURN_IF_ERROR(check_times(times.forward_s, virtual_stages, "forward_s"));
  OMNI_RETURN_IF_ERROR(check_times(times.backward_s, virtual_stages, "backward_s"));
  OMNI_RETURN_IF_ERROR(check_times(times.send_forward_s, virtual_stages - 1, "send_forward_s"));
  OMNI_RETURN_IF_ERROR(check_times(times.send_backward_s, virtual_stages - 1, "send_backward_s"));

  std::vector<std::vector<PipelineOp>> orders(static_cast<std::size_t>(stages));
  for (std::int64_t s = 0; s < stages; ++s) {
    auto order = stage_order(schedule, stages, s, micro_batches);
    if (!order.is_ok()) return order.status();
    orders[static_cast<std::size_t>(s)] = std::move(order).value();
  }
  // End of each (virtual stage, micro-batch) pass; negative: not yet run.
  const auto m = static_cast<std::size_t>(micro_batches);
  std::vector<Seconds> forward_end(virtual_stages * m, -1.0), backward_end(virtual_stages * m, -1.0);
  std::vector<std::size_t> next(static_cast<std::size_t>(stages), 0);
  std::vector<Seconds> free_at(static_cast<std::size_t>(stages), 0.0);
  ReplicaStep step;
  step.stages.resize(static_cast<std::size_t>(stages));
  std::size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  // Round-robin over stages: each round runs every pass whose input is ready. A valid order always progresses.
  while (remaining > 0) {
    bool progressed = false;
    for (std::int64_t s = 0; s < stages; ++s) {
      const auto si = static_cast<std::size_t>(s);
      auto& activity = step.stages[si];
      while (next[si] < orders[si].size()) {
        const PipelineOp& op = orders[si][next[si]];
        const auto j = static_cast<std::size_t>(op.chunk * stages + s);
        const auto i = static_cast<std::size_t>(op.micro_batch);
        Seconds ready = 0.0;
        if (op.pass == PassKind::kForward) {
          if (j > 0) {
            const Seconds in = forward_end[(j - 1) * m + i];
            if (in < 0.0) break;
            ready = in + times.send_forward_s[j - 1];
          }
        } else if (j + 1 < virtual_stages) {
          const Seconds in = backward_end[(j + 1) * m + i];
          if (in < 0.0) break;
          ready = in + times.send_backward_s[j];
        } else {
          ready = forward_end[j * m + i];
          if (ready < 0.0) break;
        }
        const Seconds start = std::max(ready, free_at[si]);
        const Seconds duration = op.pass == PassKind::kForward ? times.forward_s[j] : times.backward_s[j];
        const Seconds end = clock ? clock(j, start, duration) : start + duration;
        (op.pass == PassKind::kForward ? forward_end : backward_end)[j * m + i] = end;
        if (next[si] == 0) activity.first_start_s = start;
        activity.compute_s += end - start;
        activity.last_end_s = end;
        if (op.pass == PassKind::kForward && j + 1 < virtual_stages) activity.send_s += times.send_forward_s[j];
        if (op.pass == PassKind::kBackward && j > 0) activity.send_s += times.send_backward_s[j - 1];
        if (keep_ops) activity.ops.push_back({op, start, end});
        free_at[si] = end;
        ++next[si];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) return Status::internal("the pipeline order deadlocked (a pass waits for one that never runs)");
  }
  for (const auto& a : step.stages) step.makespan_s = std::max(step.makespan_s, a.last_end_s);
  return step;
}

}  // namespace omnilearn::hybrid
