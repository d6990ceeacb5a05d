// Running sweep points: each point is its own `omnilearn sim` process (SimGrid allows one engine per process),
// started as a Subprocess (no shell), N at a time. Not thread-safe: reaps children with waitpid(-1) in the caller.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omnilearn/scenarios/sweep.h"

namespace omnilearn::cli {

// Exit code recorded for a point that was not run here (another MPI rank's point, or one without results).
inline constexpr int kPointNotRun = -1;

struct PointRunOptions {
  std::string exe;              // the omnilearn binary to start for each point
  std::string out;              // the sweep's output folder: <out>/<point>/ and <out>/<point>.log
  int jobs = 2;                 // points run at the same time, >= 1
  bool iteration_rows = true;   // false passes --no-iterations to each point
  std::vector<std::string> sim_args;  // passed on to each point's `omnilearn sim` (--cfg=..., --log=...)
  bool progress = true;         // progress on stderr: a bar on a terminal, plain lines otherwise
  std::string label = "sweep";  // the progress's label
  // Drops OpenMPI/PMIx variables from the children's environment, so that a point never takes itself for an
  // MPI process.
  bool strip_mpi_environment = false;
};

// The command line of one point: `<exe> sim <base> --quiet --out <run_dir> --force [--set o]... [--no-iterations]
// [--no-timeline] [sim_args...]`. --force: the sweep owns its point folders (it holds <out>'s lock and lists them in
// its index), so a point run again (--resume, a resubmitted SLURM task) replaces what an earlier attempt left there.
// --no-timeline unless an override sets outputs.timeline (the sweep file's `set:` or an axis, or sweep --set): a
// sweep's timelines are rarely looked at and were most of its bytes.
std::vector<std::string> point_command_words(const std::string& exe, const scenarios::SweepPoint& point,
                                             const std::string& run_dir, bool iteration_rows,
                                             const std::vector<std::string>& sim_args = {});

// Runs points[i] for every i in `indices` and returns one exit code per point of `points`: the process's exit
// status, 128 + signal when killed, 127 when it could not be started, kPointNotRun for points not in `indices`.
// Start failures are reported on stderr.
std::vector<int> run_sweep_points(const std::vector<scenarios::SweepPoint>& points,
                                  const std::vector<std::size_t>& indices, const PointRunOptions& options);

}  // namespace omnilearn::cli
