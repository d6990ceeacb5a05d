// RunRecorder: the simulator's side of a run folder. Wraps scenarios::RunWriter, keeps the running totals that
// summary.json needs (so rows can be switched off for huge runs), and writes manifest.json with one wall-clock
// block. Not thread-safe: used from the simulation thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/scenarios/run_writer.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/simulation.h"

namespace omnilearn::sim {

class RunRecorder {
 public:
  // Claims the run folder (options.reuse), writes manifest.json (its wall_clock.elapsed_s is null until finish()).
  static Result<std::unique_ptr<RunRecorder>> open(const scenarios::Scenario& scenario, const SimOptions& options);

  // One worker's iteration: totals always, a CSV row and timeline spans when enabled.
  void iteration(const scenarios::IterationRecord& r);
  // A controller result at a decision point; only plans that consulted the policy are written.
  void plan(const controller::Plan& plan, std::int64_t epoch);
  void availability(WorkerId worker, double fraction, Seconds time_s);

  // Completes `summary` (idle fraction, decisions, batch changes, staleness), writes summary.json, closes the
  // files and rewrites manifest.json with the elapsed wall-clock time.
  Status finish(scenarios::RunSummary& summary);
  // Closes the files of a run stopped before its end: rows whole, timeline.json valid, no summary.json.
  Status close();

  double busy_s() const { return compute_s_ + comm_s_; }
  std::int64_t iteration_records() const { return records_; }

 private:
  RunRecorder() = default;
  std::unique_ptr<scenarios::RunWriter> writer_;
  const scenarios::Scenario* scenario_ = nullptr;
  const SimOptions* options_ = nullptr;
  std::string started_;
  std::chrono::steady_clock::time_point start_;
  bool rows_ = true;
  bool timeline_ = true;
  double compute_s_ = 0.0, comm_s_ = 0.0, wait_s_ = 0.0;
  std::int64_t records_ = 0;
  std::int64_t decisions_ = 0, changes_ = 0;
  double staleness_sum_ = 0.0;
  std::int64_t staleness_count_ = 0, staleness_max_ = 0;
};

// manifest.json text: the resolved scenario, argv, seed, versions, extra fields and the wall_clock block.
std::string manifest_json(const scenarios::Scenario& scenario, const SimOptions& options, const std::string& started,
                          const std::string& elapsed_s);

}  // namespace omnilearn::sim
