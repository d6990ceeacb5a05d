#include "cli/sweep_slurm.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/sweep_runner.h"
#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/text_checks.h"

namespace omnilearn::cli {
namespace {

// An #SBATCH value: SLURM reads these lines itself (no shell), and accepts double quotes around a value with
// spaces.
std::string sbatch_value(const std::string& text) {
  return text.find_first_of(" \t") == std::string::npos ? text : "\"" + text + "\"";
}

// An error naming `what` if `text` cannot be put in the script as it is.
Status check_script_value(const std::string& what, const std::string& text, bool sbatch = false) {
  if (const std::size_t at = control_char_offset(text); at != std::string::npos) {
    return Status::invalid_argument(what + " '" + text.substr(0, at) +
                                    "...' holds a control character (a newline, tab, ...) at byte " +
                                    std::to_string(at + 1) + "; expected none in a SLURM script");
  }
  if (sbatch && text.find('"') != std::string::npos) {
    return Status::invalid_argument(what + " '" + text + "' holds '\"'; expected none in an #SBATCH line");
  }
  return Status::ok();
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<std::string> slurm_array_script(const scenarios::Sweep& sweep,
                                       const std::vector<scenarios::SweepPoint>& points, const std::string& exe,
                                       const std::string& sweep_path, const std::string& out, bool iteration_rows,
                                       const SlurmOptions& options, const std::vector<std::string>& sim_args) {
  std::ostringstream s;
  const std::string job = options.job_name.empty() ? "omnilearn-" + sweep.name : options.job_name;
  OMNI_RETURN_IF_ERROR(check_script_value("the sweep's name", sweep.name));
  OMNI_RETURN_IF_ERROR(check_script_value("the sweep file's path", sweep.source_path));
  OMNI_RETURN_IF_ERROR(check_script_value("the sweep file's path", sweep_path));
  OMNI_RETURN_IF_ERROR(check_script_value("the omnilearn binary's path", exe));
  OMNI_RETURN_IF_ERROR(check_script_value("--out", out, /*sbatch=*/true));
  OMNI_RETURN_IF_ERROR(check_script_value("the job name", job, /*sbatch=*/true));
  OMNI_RETURN_IF_ERROR(check_script_value("--slurm-time", options.time_limit, /*sbatch=*/true));
  OMNI_RETURN_IF_ERROR(check_script_value("--slurm-partition", options.partition, /*sbatch=*/true));
  s << "#!/bin/bash\n"
    << "# SLURM job array for the omnilearn sweep '" << sweep.name << "' (" << sweep.source_path
    << "): " << points.size() << " points, one array task each.\n"
    << "# Written by `omnilearn sweep --emit-slurm`; submit it with sbatch, then gather (see the end).\n"
    << "#SBATCH --job-name=" << sbatch_value(job) << "\n";
  if (!points.empty()) s << "#SBATCH --array=0-" << points.size() - 1 << "\n";
  s << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=" << options.cpus_per_task << "\n"
    << "#SBATCH --time=" << sbatch_value(options.time_limit) << "\n";
  if (!options.partition.empty()) s << "#SBATCH --partition=" << sbatch_value(options.partition) << "\n";
  s << "#SBATCH --output=" << sbatch_value(out + "/slurm-%A_%a.out") << "\n"
    << "set -u\n"
    << "# Set OMNILEARN to use another omnilearn binary on the compute nodes.\n"
    << "omnilearn=${OMNILEARN:-" << shell_quote(exe) << "}\n"
    << "out=" << shell_quote(out) << "\n"
    << "case \"${SLURM_ARRAY_TASK_ID:?not run as a SLURM array task}\" in\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    scenarios::SweepPoint point = points[i];
    std::error_code ec;
    const std::filesystem::path base = std::filesystem::absolute(point.base_path, ec);
    if (ec) return Status::invalid_argument(point.base_path + ": cannot make the path absolute: " + ec.message());
    point.base_path = base.lexically_normal().string();
    std::vector<std::string> words = point_command_words("", point, out + "/" + point.name, iteration_rows, sim_args);
    for (const std::string& word : words) {
      OMNI_RETURN_IF_ERROR(check_script_value("point '" + points[i].name + "': the argument", word));
    }
    s << "  " << i << ")\n    point=" << shell_quote(points[i].name) << "\n    args=(";
    for (std::size_t w = 1; w < words.size(); ++w) s << (w > 1 ? " " : "") << shell_quote(words[w]);
    s << ")\n    ;;\n";
  }
  s << "  *)\n    echo \"no sweep point for array task $SLURM_ARRAY_TASK_ID\" >&2\n    exit 2\n    ;;\n"
    << "esac\n"
    << "\"$omnilearn\" \"${args[@]}\" >\"$out/$point.log\" 2>&1\n"
    << "rc=$?\n"
    << "echo \"$rc\" >\"$out/$point.exit\"\n"
    << "exit \"$rc\"\n"
    << "# When every task has finished, gather sweep.csv and the table from the point folders:\n"
    << "#   omnilearn sweep " << shell_quote(sweep_path) << " --gather --out " << shell_quote(out) << "\n"
    << "# or submit that as a dependent job: sbatch --dependency=afterany:<array job id> --wrap \"...\"\n";
  return s.str();
}

Status write_slurm_script(const std::string& text, const std::string& path) {
  return write_file_atomically(path, text, /*mode=*/0755);
}

}  // namespace omnilearn::cli
