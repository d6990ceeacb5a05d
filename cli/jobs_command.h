// `omnilearn jobs`: import public job workloads, generate Philly-like ones, and check job files (traces/JOBS.md).
// A thin CLI adapter over omnilearn::traces; no shared state: each call is independent.
#pragma once

#include <string>
#include <vector>

// Runs `omnilearn jobs <subcommand> ...`; `args` are the words after "jobs". Prints results to stdout and errors to
// stderr; returns 0 on success, 1 on a failure, 2 on a usage error. Never exits the process.
int run_jobs_command(const std::vector<std::string>& args);

namespace omnilearn::cli {
// `omnilearn jobs run` (jobs_run_command.cpp): `args` are the words after "run".
int run_jobs_run(const std::vector<std::string>& args);
}  // namespace omnilearn::cli
