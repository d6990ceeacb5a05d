// The subcommands of the omnilearn binary. Each takes the words after its name, prints results to stdout and
// errors to stderr, and returns the process exit code (0 ok, 1 failure, 2 usage error). None exits the process.
#pragma once

#include <string>
#include <vector>

#include "cli/jobs_command.h"
#include "cli/trace_command.h"

namespace omnilearn::cli {

std::string version_string();  // "0.1.0 (git abc1234)"

int run_demo_command(const std::vector<std::string>& args);
// `argv` is the whole command line, recorded in the run's manifest.
int run_sim_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
int run_sweep_command(const std::vector<std::string>& args);
// Calibrates, runs the testbed and the simulator on one scenario, and compares them (needs the emulator too).
int run_validate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
// `omnilearn emulate`: the real testbed (exit 130/143 when stopped by SIGINT/SIGTERM).
int run_emulate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
// `omnilearn calibrate`: model profile + throttle-fidelity table of this host.
int run_calibrate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
// `omnilearn chakra`: replays a Chakra execution trace (one file per rank) on a simple network.
int run_chakra_command(const std::vector<std::string>& args);
// Runs the Python analysis package (figures, HTML report, trace plots).
int run_report_command(const std::vector<std::string>& args);

}  // namespace omnilearn::cli
