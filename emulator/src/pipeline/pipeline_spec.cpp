// PipelineTestbedSpec's helpers and checks (pipeline_testbed.h).
#include <numeric>
#include <string>

#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::emulator {
namespace {

Status field(const std::string& name, const std::string& what) {
  return Status::invalid_argument("pipeline spec: " + name + ": " + what);
}

Status validate_model(const PipelineTestbedSpec& s) {
  if (s.widths.size() < 2) return field("widths", "expected the input width and at least one layer's width");
  for (const std::int64_t w : s.widths) {
    if (w < 1 || w > 65536) return field("widths", "each width must be in [1, 65536]");
  }
  if (static_cast<std::int64_t>(s.layers_per_stage.size()) != s.stages) {
    return field("layers_per_stage", "expected one count per stage (" + std::to_string(s.stages) + ")");
  }
  for (const std::int64_t l : s.layers_per_stage) {
    if (l < 1) return field("layers_per_stage", "every stage needs at least one layer");
  }
  const std::int64_t sum = std::accumulate(s.layers_per_stage.begin(), s.layers_per_stage.end(), std::int64_t{0});
  if (sum != pipeline_layers(s)) {
    return field("layers_per_stage", "the counts sum to " + std::to_string(sum) + " but the MLP has " +
                                         std::to_string(pipeline_layers(s)) + " layers (widths - 1)");
  }
  return Status::ok();
}

Status validate_run(const PipelineTestbedSpec& s, int host_cpus) {
  if (s.shares.size() != static_cast<std::size_t>(s.stages * s.replicas)) {
    return field("shares", "expected replicas x stages = " + std::to_string(s.stages * s.replicas) + " shares");
  }
  double total = 0.0;
  for (const double x : s.shares) {
    if (!(x > 0.0 && x <= 1.0)) return field("shares", "each share must be in (0, 1] of a core");
    total += x;
  }
  if (total > host_cpus + 1e-9) {
    return field("shares", "they sum to " + std::to_string(total) + " cores but this host has " + std::to_string(host_cpus));
  }
  if (s.micro_batch_size < 1) return field("micro_batch_size", "expected at least 1");
  if (s.micro_batches < s.replicas) return field("micro_batches", "expected at least one per replica");
  if (s.schedule.kind == hybrid::ScheduleKind::kInterleaved || s.schedule.chunks != 1) {
    return field("schedule", "gpipe or 1f1b (one model chunk per stage)");
  }
  if (s.steps < 1 || s.warmup_steps < 0 || s.window < 1) return field("steps", "steps >= 1, warmup_steps >= 0, window >= 1");
  if (!(s.cpu_period_s >= 0.002 && s.cpu_period_s <= 1.0)) {
    return field("cpu_period_s", "expected [0.002, 1] s (the quota of a 0.5 share must reach the kernel's 1 ms)");
  }
  if (s.calibration_reps < 3) return field("calibration_reps", "expected at least 3");
  if (!(s.stall_timeout_s > 0.0)) return field("stall_timeout_s", "expected > 0");
  if (!(s.learning_rate >= 0.0)) return field("learning_rate", "expected >= 0");
  if (!controller::make_default_registry().contains(s.controller.policy)) {
    return field("controller.policy", "unknown policy '" + s.controller.policy + "'");
  }
  if (s.controller.every_n < 1 || !(s.controller.ewma_alpha > 0.0 && s.controller.ewma_alpha <= 1.0)) {
    return field("controller", "every_n >= 1 and ewma_alpha in (0, 1]");
  }
  return Status::ok();
}

}  // namespace

std::int64_t pipeline_layers(const PipelineTestbedSpec& spec) {
  return static_cast<std::int64_t>(spec.widths.size()) - 1;
}

std::int64_t stage_first_layer(const PipelineTestbedSpec& spec, std::int64_t stage) {
  std::int64_t first = 0;
  for (std::int64_t s = 0; s < stage && s < static_cast<std::int64_t>(spec.layers_per_stage.size()); ++s) {
    first += spec.layers_per_stage[static_cast<std::size_t>(s)];
  }
  return first;
}

double stage_share(const PipelineTestbedSpec& spec, std::int64_t replica, std::int64_t stage) {
  return spec.shares.at(static_cast<std::size_t>(replica * spec.stages + stage));
}

Status validate_pipeline_spec(const PipelineTestbedSpec& spec, int host_cpus) {
  if (spec.stages < 2 || spec.stages > 64) return field("stages", "expected 2 to 64");
  if (spec.replicas < 1 || spec.replicas > 16) return field("replicas", "expected 1 to 16");
  OMNI_RETURN_IF_ERROR(validate_model(spec));
  return validate_run(spec, host_cpus);
}

}  // namespace omnilearn::emulator
