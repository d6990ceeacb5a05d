// The pipeline testbed's files in its run folder (pipeline_testbed.h): calibration.csv, steps.csv, stages.csv,
// timeline.csv and, for a completed run, validation.json; check_pipeline_run() reads them back. Internal to the
// emulator library.
#pragma once

#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::emulator {

// Writes what `result` holds (each file atomically) and joins the stages' timeline parts into timeline.csv. An
// error names the file.
Status write_pipeline_outputs(const PipelineTestbedSpec& spec, const PipelineTestbedResult& result,
                              const std::string& out_dir);

// validation.json of a comparison.
Status write_pipeline_validation(const PipelineTestbedSpec& spec, const PipelineComparison& comparison,
                                 const std::string& out_dir);

}  // namespace omnilearn::emulator
