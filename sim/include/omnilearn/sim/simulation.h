// run_simulation: runs one scenario in SimGrid (platform, worker actors, collectives or a parameter server, the
// controller, availability) and writes its run folder. SimGrid allows one engine per process, so call this at
// most once per process and never from two threads; everything it builds lives inside the call.
#pragma once

#include "omnilearn/base/status.h"
#include "omnilearn/run/run_writer.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/sim_options.h"

namespace omnilearn::sim {

// Runs `scenario` to its stop condition (epochs, sample_budget or max_iterations) and writes the run folder.
// Returns the summary also written to summary.json, or an error naming the scenario field or the file at fault
// (an unsupported availability kind, an unreadable trace, an invalid controller configuration, an I/O error).
Result<run::RunSummary> run_simulation(const scenarios::Scenario& scenario, const SimOptions& options);

}  // namespace omnilearn::sim
