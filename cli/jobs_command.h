// `omnilearn jobs`: import public job workloads, generate Philly-like ones, and check job files (traces/JOBS.md).
// A thin CLI adapter over omnilearn::traces; no shared state: each call is independent.
#pragma once

#include <boost/program_options/variables_map.hpp>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/jobs_run_setup.h"

// Runs `omnilearn jobs <subcommand> ...`; `args` are the words after "jobs". Prints results to stdout and errors to
// stderr; returns 0 on success, 1 on a failure, 2 on a usage error. Never exits the process.
int run_jobs_command(const std::vector<std::string>& args);

namespace omnilearn::cli {
// `omnilearn jobs run` (jobs_run_command.cpp): `args` are the words after "run".
int run_jobs_run(const std::vector<std::string>& args);
// `omnilearn jobs emulate` and `omnilearn jobs validate` (jobs_emulate_command.cpp, jobs_validate_command.cpp).
int run_jobs_emulate(const std::vector<std::string>& args);
int run_jobs_validate(const std::vector<std::string>& args);
// The scenario overrides the options of `jobs run` given in `vm` stand for (those a command does not declare are
// absent), in option order, then --set, then --seed: what run::resolve_jobs_run applies to the scenario.
std::vector<run::ScenarioOverride> jobs_run_overrides(const boost::program_options::variables_map& vm);
}  // namespace omnilearn::cli
