// The testbed's subcommands, for the omnilearn binary (cli/main.cpp). Each
// takes the words after its name and returns the exit code (0 ok, 1 failure, 2 usage, 130/143 stopped by
// SIGINT/SIGTERM). `argv` is the whole command line, recorded in the run's manifest.
#pragma once

#include <string>
#include <vector>

namespace omnilearn::cli {

int run_emulate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);
// `omnilearn calibrate`: profile + throttle-fidelity table of this host (emulator/cli/calibrate_command.cpp).
int run_calibrate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv);

}  // namespace omnilearn::cli
