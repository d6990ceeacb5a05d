// `omnilearn trace`: import raw public traces, synthesise traces, and summarise trace files.
// A thin CLI adapter over omnilearn::traces; no shared state: each call is independent.
#pragma once

#include <string>
#include <vector>

// Runs `omnilearn trace <subcommand> ...`; `args` are the words after "trace". Prints results to stdout and
// errors to stderr; returns 0 on success, 1 on a failure, 2 on a usage error. Never exits the process.
int run_trace_command(const std::vector<std::string>& args);
