// RunWriter: writes a run folder (DESIGN.md §4) — the one schema that `omnilearn sim` and `omnilearn emulate`
// share, so analysis/ reads both the same way. Rows are streamed and flushed, so a run that dies keeps what it
// wrote; it writes only into a folder it owns (RunFolder), and manifest.json and summary.json atomically.
// Not thread-safe: one writer thread per run.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/records.h"
#include "omnilearn/run/run_folder.h"

namespace omnilearn::run {

// plans.csv's rows per decision. kFull: one per worker. kChanges: a marker row (worker and weight empty) opening
// each decision, then one row per worker whose batch or weight differs from the previous decision (every worker at
// the first); a reader carries each worker's values forward. When every weight is exactly b_k / sum(b) (as the
// controller computes them), the marker's batch cell holds sum(b), only batch changes are listed, with empty weight
// cells, and every worker's weight is b_k / sum(b) (0 when the sum is 0); otherwise the marker's batch cell is empty. kAuto: kFull up to kFullPlanRowsMaxWorkers
// workers, kChanges above (a 2,048-worker run with churn otherwise writes hundreds of MB of unchanged rows).
enum class PlanRows { kAuto, kFull, kChanges };

// summary.json's text for `summary` (what RunWriter::finish writes): a JSON object ending in a newline.
std::string summary_json(const RunSummary& summary);
inline constexpr std::size_t kFullPlanRowsMaxWorkers = 64;

class RunWriter {
 public:
  // Claims `dir` (RunFolder::claim with `reuse`: refused when another run holds it or, by default, when it is not
  // empty) and opens every CSV with its header. `manifest_json` is written to manifest.json as is (a JSON object:
  // resolved scenario, argv, seed, versions, git SHA, wall-clock fields). `timeline` false skips timeline.json.
  static Result<std::unique_ptr<RunWriter>> open(const std::string& dir, const std::string& manifest_json,
                                                 bool timeline, const RunFolderOptions& reuse = {});
  // The same in a folder the caller already claimed; the writer keeps it, and its lock, until destroyed.
  static Result<std::unique_ptr<RunWriter>> open(std::unique_ptr<RunFolder> folder, const std::string& manifest_json,
                                                 bool timeline);
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  void add(const IterationRecord& r);
  void add(const PlanRecord& r);
  // plans.csv's form for the decisions added from now on (call before the first: the file's form is one).
  void set_plan_rows(PlanRows rows) { plan_rows_ = rows; }
  void add(const AvailabilityRecord& r);
  // evaluations.csv; `joules` (a run with energy: what the run's total counts up to r.time_s, EnergyMeter::evaluation)
  // fills the `joules` column when set_evaluation_joules() added it.
  void add(const EvaluationRecord& r, std::optional<double> joules = std::nullopt);
  // evaluations.csv gains a `joules` column (a run with energy): call before the first row.
  void set_evaluation_joules();
  // Timeline (Chrome trace-event JSON): a complete span on a worker's track, or an instant event.
  void span(WorkerId worker, const char* name, Seconds start_s, Seconds duration_s);
  void instant(const char* name, Seconds time_s, const std::string& args_json = "{}");
  // Closes every file, then writes summary.json (atomically, last: its presence means the run folder is complete).
  // Returns the first I/O error met while writing, if any; after one, no summary.json is written. Calling finish()
  // or close() a second time is an error. Without either, the destructor closes timeline.json as valid JSON.
  Status finish(const RunSummary& summary);
  // Closes every file without a summary.json (a run stopped before its end): rows whole, timeline.json valid.
  Status close();
  // Writes `name` (one of run_folder_files(), not one this writer streams) whole and atomically: a file made at the
  // run's end, such as the ASP server's barriers.csv.
  Status write_file(const std::string& name, const std::string& text);
  // Replaces manifest.json (atomically), e.g. with the elapsed wall-clock time once the run is over.
  Status rewrite_manifest(const std::string& manifest_json);

  const std::string& dir() const { return dir_; }

 private:
  RunWriter() = default;
  void note_error(const std::ofstream& out, const char* file);  // remembers the first failed write
  void write_event(const std::string& event_json);
  void close_timeline();
  Status close_files();

  std::unique_ptr<RunFolder> folder_;  // first: released after every file is closed
  std::string dir_;
  std::ofstream iterations_, plans_, availability_, evaluations_, timeline_;
  bool timeline_first_ = true;
  bool evaluation_joules_ = false;   // set_evaluation_joules
  std::int64_t evaluation_rows_ = 0;
  bool finished_ = false;
  std::int64_t iteration_rows_ = 0;  // flushed every kFlushEvery rows
  std::int64_t availability_rows_ = 0;
  std::int64_t timeline_events_ = 0;
  std::vector<bool> named_tracks_;   // workers whose timeline track got its thread_name event
  PlanRows plan_rows_ = PlanRows::kAuto;
  bool plans_written_ = false;                 // kChanges: the first decision lists every worker
  std::vector<BatchSize> last_batch_;          // kChanges: the previous decision's values
  std::vector<std::string> last_weight_;
  Status first_error_;
};

}  // namespace omnilearn::run
