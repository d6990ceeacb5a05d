// What crosses between the pipeline launcher and its stage processes (pipeline_testbed.h): the run's pipeline.json
// (the spec and the rendezvous file), read by every stage, and one JSON line per report on the stage's pipe. The
// launcher answers the calibration with the line kPipelineGo once every quota is applied. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::emulator {

// A stage process's rank is replica x stages + stage; Gloo groups are made per replica, per stage and over all.
struct PipelineStageConfig {
  PipelineTestbedSpec spec;
  std::string store_file;  // the c10d FileStore of the rendezvous (in the run folder)
};
Status write_pipeline_config(const PipelineStageConfig& config, const std::string& path);
Result<PipelineStageConfig> read_pipeline_config(const std::string& path);

// A stage's calibration at a full core (pipeline_testbed.h's PipelineCalibration, one stage's part). The send times
// are those of the boundary to the next stage, measured by replica 0's stages only (negative: not measured here).
struct StageCalibrationReport {
  std::int64_t rank = 0;
  Seconds forward_s = 0.0;
  Seconds backward_s = 0.0;
  Seconds update_s = 0.0;
  Seconds send_forward_s = -1.0;
  Seconds send_backward_s = -1.0;
  Seconds allreduce_s = 0.0;
  Seconds sync_s = 0.0;
};
// One step of one stage. Every stage reports the step's replica times and micro-batches (the same everywhere).
struct StageStepReport {
  std::int64_t rank = 0;
  std::int64_t step = 0;
  Seconds compute_s = 0.0;
  Seconds wait_s = 0.0;
  Seconds step_s = 0.0;  // this stage's whole step, from the previous closing sync to this one
  std::vector<Seconds> replica_s;
  std::vector<std::int64_t> micro_batches;
};
struct StageDoneReport {
  std::int64_t rank = 0;
};
using StageReport = std::variant<StageCalibrationReport, StageStepReport, StageDoneReport>;

inline constexpr std::string_view kPipelineGo = "go";

// Where stage `rank` writes its timeline rows (no header) at its end; the launcher joins them into timeline.csv.
std::string pipeline_timeline_part(const std::string& run_dir, std::int64_t rank);

// One line, ending in '\n'.
std::string encode_stage_report(const StageReport& report);
// Parses one line (without its '\n'); the error says what is wrong with it.
Result<StageReport> decode_stage_report(std::string_view line);

}  // namespace omnilearn::emulator
