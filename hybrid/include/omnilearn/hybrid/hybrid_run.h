// run_hybrid(): a hybrid job trained step after step on a cluster whose devices and links change speed, under one
// of four policies: Megatron-LM's default (equal layers and micro-batches, never changed), a static plan made by the
// planner from the initial speeds, the OmniLearn hybrid controller (micro-batches per replica every decision, layers
// per stage every N steps or on imbalance when the saving pays for the move, a re-plan when devices leave or join or
// the lower levels sit at their bounds) and an oracle that re-solves levels 1 and 2 with the true speeds every step.
// Deterministic: the same spec gives the same result. Not thread-safe (one call owns its state).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/hybrid/hybrid_planner.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::hybrid {

enum class HybridPolicy { kEqual, kStatic, kOmnilearn, kOracle };
const char* policy_name(HybridPolicy policy);
Result<HybridPolicy> parse_hybrid_policy(std::string_view name);  // equal, static, omnilearn, oracle

// A device at `factor` of its speed, or a node's network at `factor` of its bandwidth, in [from_s, to_s).
struct SpeedEpisode {
  enum class Target { kDevice, kNodeLink } target = Target::kDevice;
  std::int64_t index = 0;  // device or node
  Seconds from_s = 0.0;
  Seconds to_s = 0.0;
  double factor = 1.0;  // 0 takes a device down (it leaves the job)
};

struct HybridControl {
  std::string batch_policy = "omnilearn";  // level 1: a controller policy (controller/policy_registry.h)
  std::int64_t every_n = 1;                // steps between level-1 decisions
  double dead_band = 0.05;
  std::int64_t layer_every_n = 20;         // level 2 at least this often ...
  double imbalance_threshold = 0.05;       // ... and whenever a replica's stages differ by this much
  std::int64_t horizon_steps = 100;        // a move must pay for itself within this many steps
  Seconds restart_s = 30.0;                // level 3: stopping, checkpointing and restarting
  double checkpoint_bytes_per_s = 2e9;     // per device, writing and reading its state
};

struct HybridRunSpec {
  HybridCluster cluster;
  HybridShape shape;
  PipelineSchedule schedule;
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  std::vector<std::int64_t> layers_per_stage;  // the initial layers per virtual stage (empty: even)
  HybridPolicy policy = HybridPolicy::kOmnilearn;
  HybridControl control;
  std::int64_t steps = 100;
  std::vector<SpeedEpisode> episodes;
  // A real availability trace: its worker k sets device trace_devices[k]'s speed (empty: device k).
  std::optional<traces::AvailabilityTrace> trace;
  std::vector<std::int64_t> trace_devices;
  MemoryOptions memory;
  StepOptions step;
  std::int64_t timeline_steps = 2;  // steps whose passes go to the timeline
};

struct StepRecord {
  std::int64_t step = 0;
  Seconds start_s = 0.0;
  Seconds step_s = 0.0;      // the step, overhead included
  Seconds overhead_s = 0.0;  // moving layers or restarting, charged to this step
  std::vector<std::int64_t> micro_batches;
  std::int64_t live_devices = 0;
};

// A plan change: level 1 (micro-batches), 2 (layers) or 3 (re-plan), with what it installed.
struct PlanRecord {
  std::int64_t step = 0;
  int level = 0;
  std::string reason;
  Seconds cost_s = 0.0;
  Seconds predicted_saving_s = 0.0;  // per step, for levels 2 and 3
  std::vector<std::int64_t> micro_batches;
  std::vector<std::vector<std::int64_t>> layers;
};

struct PlacementRecord {
  std::int64_t from_step = 0;
  std::int64_t device = 0;
  Placement place;
};

struct TimelineSpan {
  std::int64_t step = 0;
  std::int64_t device = 0;
  std::string name;  // "F3" (forward of micro-batch 3), "B3", "allreduce", "update"; chunk suffix ".1" if v > 1
  Seconds start_s = 0.0;
  Seconds end_s = 0.0;
};

struct HybridRunResult {
  std::string policy;
  std::vector<StepRecord> steps;
  std::vector<PlanRecord> plans;
  std::vector<PlacementRecord> placements;
  std::vector<DeviceTime> device_totals;  // per cluster device, over the run
  std::vector<TimelineSpan> timeline;
  std::vector<DeviceMemory> memory;       // of the initial plan
  Seconds total_s = 0.0;
  HybridShape final_shape;
};

// `progress(step)` is called after each step when set. Errors: an invalid spec or plan (named), a plan that does
// not fit memory, a cluster left without a shape that fits.
Result<HybridRunResult> run_hybrid(const HybridRunSpec& spec, const LayerCostSource& source,
                                   const std::function<void(std::int64_t)>& progress = {});

// Writes steps.csv, plans.csv, placement.csv, devices.csv, timeline.json (Chrome trace events: Perfetto and
// chrome://tracing open it) and summary.json into `dir` (created), each atomically.
Status write_hybrid_run(const HybridRunResult& result, const HybridRunSpec& spec, const std::string& dir,
                        const std::string& summary_extra_json = "{}");

}  // namespace omnilearn::hybrid
