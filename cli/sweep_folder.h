// A sweep's output folder: <out>/sweep-index.txt names every point folder the sweep wrote there (one per line), so
// that --force removes exactly those (and the sweep's own files) and --resume knows which points are finished.
// The sweep holds the folder's lock (run::RunFolder) while it runs. Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/sweep.h"

namespace omnilearn::cli {

inline constexpr const char* kSweepIndex = "sweep-index.txt";

// The point names listed in <out>/sweep-index.txt (plain names only), or none when there is no index.
std::vector<std::string> read_sweep_index(const std::string& out);

// Claims `out` for a sweep of `points`: kRefuse refuses a non-empty folder (suggesting --force or --resume);
// kReplace first removes sweep.csv, the index, the points' .log and .exit files and the run files of every point
// folder the index lists (nothing else); kKeep touches nothing. Unless `keep_index`, then writes the index: the
// points already listed plus `points`.
Result<std::unique_ptr<run::RunFolder>> claim_sweep_folder(const std::string& out,
                                                                 const std::vector<scenarios::SweepPoint>& points,
                                                                 run::FolderReuse reuse, bool keep_index);

// Whether <out>/<name>/summary.json holds a JSON object: the point ran to its end (summary.json is written last,
// atomically). A jobs run's summary that says it was stopped other than by its max_time (a signal, an error) does
// not count: such a point runs again.
bool point_finished(const std::string& out, const std::string& name);

}  // namespace omnilearn::cli
