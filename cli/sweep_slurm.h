// SweepSlurmScript: a SLURM job-array script for a sweep, one array task per point. Task k runs point k as
// `omnilearn sim ... --out <out>/<point>` (every word single-quoted for bash), logs to <out>/<point>.log and
// records its exit status in <out>/<point>.exit for `omnilearn sweep --gather`. Pure functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/sweep.h"

namespace omnilearn::cli {

struct SlurmOptions {
  std::string job_name;                 // default: omnilearn-<sweep name>
  std::string time_limit = "01:00:00";  // `#SBATCH --time`, SLURM's format (minutes, HH:MM:SS, D-HH:MM:SS)
  int cpus_per_task = 1;
  std::string partition;  // `#SBATCH --partition` when not empty
};

// `text` as one bash word: single-quoted, each `'` written as '\''.
std::string shell_quote(const std::string& text);

// The script's text. `exe` and `out` should be absolute (the points' base paths are made absolute here): the
// tasks run on other nodes, from whatever folder sbatch was called in. `sweep_path` only appears in the note on
// gathering. Every value is single-quoted for bash; a value with a control character (a newline would end a
// comment or an #SBATCH line and start a command), or an #SBATCH value with '"', is refused, naming it.
Result<std::string> slurm_array_script(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
                               const std::string& exe, const std::string& sweep_path, const std::string& out,
                               bool iteration_rows, const SlurmOptions& options,
                               const std::vector<std::string>& sim_args = {});

// Writes the script to `path` (executable), through a temporary file and a rename.
Status write_slurm_script(const std::string& text, const std::string& path);

}  // namespace omnilearn::cli
