// RunRecorder: the one sink of a run's records, for both back ends. It writes each record to the run folder
// (RunWriter: a CSV row, and timeline spans or instants) and keeps the running totals that summary.json needs, so
// that rows can be switched off for huge runs and the summary stays exact. Not thread-safe: one thread per run (the
// simulation thread, or the testbed launcher's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/run/energy_meter.h"
#include "omnilearn/run/records.h"
#include "omnilearn/run/run_writer.h"

namespace omnilearn::run {

struct RecorderOptions {
  bool iteration_rows = true;  // a row in iterations.csv per worker iteration (the totals are kept either way)
  bool timeline = true;        // spans and instants in timeline.json (the writer must have opened it)
  PlanRows plan_rows = PlanRows::kAuto;  // plans.csv's form (RunWriter::set_plan_rows)
};

class RunRecorder {
 public:
  // `writer` null: a run without a folder; the recorder keeps the totals only, and finish() and close() write nothing.
  RunRecorder(std::unique_ptr<RunWriter> writer, RecorderOptions options);

  // One worker's iteration: its totals, and its row and compute / wait / comm spans when enabled.
  void iteration(const IterationRecord& r);
  // A controller result at a decision point: written only when it consulted the policy (plan.decided).
  void plan(const controller::Plan& plan, std::int64_t epoch);
  // A decision already made a record (the testbed's workers report them so).
  void plan(const PlanRecord& r);
  void availability(WorkerId worker, double fraction, Seconds time_s);
  void evaluation(const EvaluationRecord& r);

  // What every back end computes alike from the records: the idle fraction, decisions, batch changes, staleness
  // and the final accuracy.
  void complete(RunSummary& summary) const;
  // The fields a back end without its own clock of steps takes from the records (the testbed): iterations and
  // epochs (the largest seen + 1), the total time from `origin_s` to the last iteration's end, the mean step of
  // worker 0 and each epoch's time (from its first iteration's start to the next epoch's).
  void fill_from_records(RunSummary& summary, Seconds origin_s) const;

  // Energy from the records from now on (a scenario with `energy:`): complete() fills summary.energy and finish()
  // writes energy.csv when the meter has power figures; each evaluation's row then has its `joules` (call before
  // the first evaluation).
  void set_energy_meter(EnergyMeter meter);
  // The meter, when it has power figures (null otherwise): a back end reads the power model from it.
  const EnergyMeter* energy_meter() const { return energy_ && energy_->has_figures() ? &*energy_ : nullptr; }

  // Closes every file, writes energy.csv (when summary.energy has per-worker rows), then summary.json
  // (RunWriter::finish). Returns the first I/O error met.
  Status finish(const RunSummary& summary);
  // Closes every file of a run stopped before its end: rows whole, timeline.json valid, no summary.json.
  Status close() { return writer_ ? writer_->close() : Status::ok(); }
  // RunWriter::write_file, or nothing without a run folder.
  Status write_file(const std::string& name, const std::string& text) const {
    return writer_ ? writer_->write_file(name, text) : Status::ok();
  }
  Status rewrite_manifest(const std::string& manifest_json) {
    return writer_ ? writer_->rewrite_manifest(manifest_json) : Status::ok();
  }

  double busy_s() const { return compute_s_ + comm_s_; }
  std::int64_t iteration_records() const { return records_; }
  // The newest epoch any iteration was in (0 before the first).
  std::int64_t max_epoch() const { return std::max<std::int64_t>(max_epoch_, 0); }

 private:
  std::unique_ptr<RunWriter> writer_;
  RecorderOptions options_;
  std::optional<EnergyMeter> energy_;
  double compute_s_ = 0.0, comm_s_ = 0.0, wait_s_ = 0.0;
  std::int64_t records_ = 0;
  std::int64_t decisions_ = 0, changes_ = 0;
  double staleness_sum_ = 0.0;
  std::int64_t staleness_count_ = 0, staleness_max_ = 0;
  std::optional<double> final_accuracy_;
  std::int64_t max_step_ = -1, max_epoch_ = -1;
  std::vector<Seconds> epoch_start_;  // the first start_s seen per epoch
  Seconds last_end_s_ = 0.0;
  double step_time_sum_ = 0.0;        // worker 0's step durations
  std::int64_t steps_of_0_ = 0;
};

}  // namespace omnilearn::run
