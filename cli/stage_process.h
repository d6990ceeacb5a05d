// A stage of a command that runs other commands (`omnilearn validate`, `omnilearn jobs validate`): another command
// of this binary, or python3, started as a Subprocess (no shell) and logged on stderr. Stages stay in this process's
// group, so that a terminal's Ctrl-C reaches a testbed launcher itself (it stops its workers and removes its cgroups);
// if this process ends without stopping them (SIGKILL, a crash), they get SIGTERM, which the launcher handles alike.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/subprocess.h"

namespace omnilearn::cli {

struct StageOptions {
  std::vector<std::string> extra_env;  // "NAME=value": added to this process's environment, replacing the same name
  std::string log_file;                // empty: the stage writes to this process's stdout and stderr
};

// Logs "`who`: running words..." and starts `words` (words[0] looked up in PATH).
Result<Subprocess> spawn_stage(const std::string& who, const std::vector<std::string>& words,
                               const StageOptions& options = {});

// The exit code of a waited-for stage: its own, or 128 + the signal that ended it.
int stage_exit_code(int status);

}  // namespace omnilearn::cli
