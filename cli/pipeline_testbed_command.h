// The pipeline testbed's two commands (docs/testbed.md, "A pipeline under cgroup quotas"): `omnilearn emulate` on a
// `kind: hybrid-testbed` spec, and `omnilearn validate` on the run folder it wrote. Called by emulate_command.cpp
// and validate_command.cpp; stateless.
#pragma once

#include <string>
#include <vector>

namespace omnilearn::cli {

// Runs the spec at `spec_path` with `overrides` (`key=value` or `controller.key=value`, as --set) into `out_dir`
// (empty: runs/<name>); prints the comparison. Exit: 0 done (bars are reported, not enforced: see validate), 1
// failure, 2 a bad spec or override, 130/143 signals.
int run_pipeline_testbed_emulation(const std::string& spec_path, const std::vector<std::string>& overrides,
                                   const std::string& out_dir);

// Whether `path` is a pipeline testbed run folder (it holds pipeline.json and steps.csv).
bool is_pipeline_run_folder(const std::string& path);

// Reads the run folder back, prints measured against predicted (mean step, worst window, the split) with each bar,
// rewrites validation.json. Exit: 0 every bar met, 1 a bar missed or the folder unreadable.
int run_pipeline_run_validation(const std::string& run_dir);

}  // namespace omnilearn::cli
