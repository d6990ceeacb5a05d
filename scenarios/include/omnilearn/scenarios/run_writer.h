// RunWriter: writes a run folder (DESIGN.md §4) — the one schema that `omnilearn sim` and `omnilearn emulate`
// share, so analysis/ reads both the same way. Rows are streamed and flushed, so a run that dies keeps what it
// wrote; it writes only into a folder it owns (RunFolder), and manifest.json and summary.json atomically.
// Not thread-safe: one writer thread per run.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/run_folder.h"

namespace omnilearn::scenarios {

// One worker's iteration. Times in the run's clock (simulated or wall seconds since the run started).
struct IterationRecord {
  WorkerId worker = 0;
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  Seconds start_s = 0.0;
  Seconds compute_s = 0.0;
  Seconds comm_s = 0.0;
  Seconds wait_s = 0.0;
  BatchSize batch = 0;
  std::optional<double> loss;
  std::optional<double> accuracy;
  std::optional<std::int64_t> staleness;  // ASP: updates applied since this worker pulled
};

// One controller decision (every call that consulted the policy). plans.csv is long: one row per worker.
struct PlanRecord {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  Seconds time_s = 0.0;
  std::string reason;        // controller::to_string(PlanReason)
  bool changed = false;
  double imbalance = 0.0;
  std::vector<BatchSize> batch;
  std::vector<double> weight;
};

// An availability change that the back end applied.
struct AvailabilityRecord {
  Seconds time_s = 0.0;
  WorkerId worker = 0;
  double fraction = 1.0;
};

// Test accuracy measured during a run (testbed; the simulator has none).
struct EvaluationRecord {
  Seconds time_s = 0.0;
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  double loss = 0.0;
  double accuracy = 0.0;
};

struct RunSummary {
  std::string policy;
  std::string mode;            // "bsp" or "asp"
  std::int64_t workers = 0;
  std::int64_t iterations = 0;  // BSP: global steps; ASP: updates applied by the server
  std::int64_t epochs = 0;
  Seconds total_time_s = 0.0;
  Seconds mean_iteration_s = 0.0;
  double idle_fraction = 0.0;   // waiting time / (compute + comm + wait), over all workers
  std::vector<Seconds> epoch_time_s;  // time each epoch took
  std::optional<double> mean_staleness;  // ASP
  std::optional<std::int64_t> max_staleness;
  std::optional<Seconds> time_to_target_s;
  std::optional<double> final_accuracy;
  std::int64_t decisions = 0;
  std::int64_t batch_changes = 0;
  std::map<std::string, double> extra;  // back-end specific numbers (controller overhead, ...)
};

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
  void add(const AvailabilityRecord& r);
  void add(const EvaluationRecord& r);  // evaluations.csv
  // Timeline (Chrome trace-event JSON): a complete span on a worker's track, or an instant event.
  void span(WorkerId worker, const char* name, Seconds start_s, Seconds duration_s);
  void instant(const char* name, Seconds time_s, const std::string& args_json = "{}");
  // Closes every file, then writes summary.json (atomically, last: its presence means the run folder is complete).
  // Returns the first I/O error met while writing, if any; after one, no summary.json is written. Calling finish()
  // or close() a second time is an error. Without either, the destructor closes timeline.json as valid JSON.
  Status finish(const RunSummary& summary);
  // Closes every file without a summary.json (a run stopped before its end): rows whole, timeline.json valid.
  Status close();
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
  bool finished_ = false;
  std::int64_t iteration_rows_ = 0;  // flushed every kFlushEvery rows
  std::int64_t timeline_events_ = 0;
  std::vector<bool> named_tracks_;   // workers whose timeline track got its thread_name event
  Status first_error_;
};

}  // namespace omnilearn::scenarios
