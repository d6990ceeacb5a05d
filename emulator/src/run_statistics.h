// RunStatistics: folds the records that workers report into the run's summary.json numbers. Not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "omnilearn/scenarios/run_writer.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator::detail {

class RunStatistics {
 public:
  explicit RunStatistics(std::size_t workers) : workers_(workers) {}
  void add(const scenarios::IterationRecord& r);
  void add(const scenarios::PlanRecord& r);
  void add(const scenarios::EvaluationRecord& r);
  // The newest epoch any worker has started (epoch-scheduled availability keys on it).
  std::int64_t current_epoch() const { return max_epoch_ < 0 ? 0 : max_epoch_; }
  scenarios::RunSummary summary(const scenarios::Scenario& scenario, Seconds wall_s) const;

  std::map<std::string, double> extra;  // from the workers' ExtraRecords
  std::string stop_reason;

 private:
  std::size_t workers_;
  std::int64_t max_step_ = -1;
  std::int64_t max_epoch_ = -1;
  std::vector<Seconds> epoch_start_;   // first start_s seen per epoch
  Seconds last_end_s_ = 0.0;
  double compute_s_ = 0.0, comm_s_ = 0.0, wait_s_ = 0.0;
  double step_time_sum_ = 0.0;         // worker 0's step durations
  std::int64_t steps_of_0_ = 0;
  std::int64_t decisions_ = 0, changes_ = 0;
  std::optional<double> final_accuracy_;
  double staleness_sum_ = 0.0;         // ASP: over every iteration that reported one
  std::int64_t staleness_count_ = 0, max_staleness_ = 0;
};

}  // namespace omnilearn::emulator::detail
