// The one place that names where RunWriter lives: the bindings reach the run-folder writer only through `run_api`.
// Thread-safety: see RunWriter's header.
#pragma once

#include "omnilearn/run/run_writer.h"

namespace omnilearn::python {
namespace run_api = ::omnilearn::run;
}  // namespace omnilearn::python
