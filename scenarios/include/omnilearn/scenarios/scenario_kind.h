// ScenarioKind: which command a scenario file is for, read from its top-level `kind:` (absent: training, the
// files `omnilearn sim` runs; `kind: jobs`: a job file on a device cluster, `omnilearn jobs run`; `kind: hybrid`: a
// pipeline/tensor/data-parallel job, `omnilearn sim` too; `kind: hybrid-testbed`: a pipeline run for real on this
// host, `omnilearn emulate`).
// Stateless functions: thread-safe.
#pragma once

#include <string>

#include "omnilearn/base/status.h"

namespace omnilearn::scenarios {

enum class ScenarioKind { kTraining, kJobs, kHybrid, kHybridTestbed };

// "training", "jobs", "hybrid" or "hybrid-testbed".
const char* scenario_kind_name(ScenarioKind kind);

// Reads the file's top-level `kind:`; an error names the file (and line) when it cannot be read or parsed, or
// when `kind` is none of training, jobs, hybrid and hybrid-testbed.
Result<ScenarioKind> read_scenario_kind(const std::string& path);

}  // namespace omnilearn::scenarios
