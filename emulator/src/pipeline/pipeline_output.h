// The pipeline testbed's files in its run folder (pipeline_testbed.h): calibration.csv, steps.csv, stages.csv and,
// for a completed run, validation.json. Internal to the emulator library.
#pragma once

#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::emulator {

// The bars of docs/testbed.md ("A pipeline under cgroup quotas") that one run is judged by.
inline constexpr double kPipelineMeanBar = 0.05;    // |mean step error|
inline constexpr double kPipelineWindowBar = 0.10;  // |worst window's error|

// Writes what `result` holds (each file atomically). An error names the file.
Status write_pipeline_outputs(const PipelineTestbedSpec& spec, const PipelineTestbedResult& result,
                              const std::string& out_dir);

}  // namespace omnilearn::emulator
