// The one place that names where the run layer lives: the bindings reach the run-folder writer, the recorder, the
// manifest and the stop rule only through `run_api`. Thread-safety: see each class's header.
#pragma once

#include "omnilearn/run/manifest.h"
#include "omnilearn/run/run_recorder.h"
#include "omnilearn/run/run_writer.h"
#include "omnilearn/run/stop_rule.h"

namespace omnilearn::python {
namespace run_api = ::omnilearn::run;
}  // namespace omnilearn::python
