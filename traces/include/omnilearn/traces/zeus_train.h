// ZeusTrainTrace: Zeus's measured training paths (traces/devices/zeus-train.csv, derived by scripts/zeus-tables.py):
// per workload, batch, learning rate and seed, the first epoch at which the validation metric reached each target, or
// nothing where the run never reached it; the epochs that energy and time to accuracy multiply (docs/energy.md,
// "Energy to accuracy from Zeus's measured epochs"). Immutable after create(): thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::traces {

// The columns of zeus-train.csv, in order.
inline constexpr std::string_view kZeusTrainHeader =
    "dataset,network,batch,optimizer,learning_rate,seed,target_metric,target_epoch";

// One training run (one seed) at one batch, and when it reached a target.
struct ZeusRun {
  double learning_rate = 0.0;
  std::int64_t seed = 0;
  std::optional<std::int64_t> target_epoch;  // the first epoch (from 1) at the target; nothing: never reached
};

// One row of zeus-train.csv. The workload is "dataset/network/optimizer", as GpuPowerTable names it.
struct ZeusTrainRow {
  std::string workload;
  std::int64_t batch = 0;
  double target_metric = 0.0;
  ZeusRun run;
};

class ZeusTrainTrace {
 public:
  // Checks the rows: each names a workload, has batch >= 1, a finite learning rate > 0, seed >= 0, a finite target
  // and target_epoch >= 1 where given, and each (workload, batch, learning rate, seed, target) is given once.
  static Result<ZeusTrainTrace> create(std::vector<ZeusTrainRow> rows);

  // What is measured, each in increasing order: the workloads; the targets of a workload; the batches trained to
  // a target. Empty for anything unknown.
  std::vector<std::string> workloads() const;
  std::vector<double> targets(const std::string& workload) const;
  std::vector<std::int64_t> batches(const std::string& workload, double target_metric) const;

  // The runs of `workload` at `batch` toward `target_metric` (compared exactly, as Zeus's simulator filters them),
  // ordered by learning rate and seed; empty when none was trained.
  std::vector<ZeusRun> runs(const std::string& workload, double target_metric, std::int64_t batch) const;

 private:
  using Key = std::tuple<std::string, double, std::int64_t>;  // workload, target, batch
  std::map<Key, std::vector<ZeusRun>> runs_;
};

// Parse zeus-train.csv (comments start with '#'; an empty target_epoch is a run that never reached the target;
// errors read "source:line: field 'value' is not valid; expected ...", a second row of the same run included), and
// read a file into a trace (errors of create() name the file).
Result<std::vector<ZeusTrainRow>> parse_zeus_train_rows(std::string_view text, std::string_view source);
Result<ZeusTrainTrace> read_zeus_train_trace(const std::string& path);

}  // namespace omnilearn::traces
