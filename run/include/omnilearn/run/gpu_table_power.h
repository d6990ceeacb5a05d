// GPU power figures read from the measured table (traces/devices/zeus-power.csv, Zeus NSDI'23): a DevicePower whose
// `table` names a kind, workload and power limit gets its busy curve from the table's rows, labelled `measured
// table` (docs/energy.md, "GPU figures from the measured table"). Pure functions; the table is read by the caller.
#pragma once

#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/energy_spec.h"
#include "omnilearn/traces/gpu_power_table.h"

namespace omnilearn::run {

// The lowest average power measured on `kind` (any workload, batch and limit), and the row it comes from: an upper
// bound on the kind's idle power (the table has no idle rows). Not found for a kind the table does not have.
struct LowestGpuRow {
  double average_power_w = 0.0;
  std::string where;  // "movielens-1m/ncf/adam, batch 16384, 150 W"
};
Result<LowestGpuRow> lowest_gpu_row(const traces::GpuPowerTable& table, const std::string& kind);

// Replaces `d`'s busy curve by the table's average power at each measured batch of (kind, workload) at the limit
// (interpolated along the limit where it is not measured; the curve's log2-batch interpolation is the table's own
// power-in-batch rule), its blocked figure (waiting, communicating) by lowest_gpu_row (an upper bound of idle), and,
// where `set_idle`, its idle figure by the same. Errors name
// `field` (energy.gpu.table): an unknown kind or workload, a limit outside the measured ones.
Status resolve_gpu_table(scenarios::DevicePower& d, const traces::GpuPowerTable& table, bool set_idle,
                         const std::string& field);

// The batches of the resolved curve's measured range, for the refusal of a batch outside it: [first, last].
std::pair<double, double> table_batch_range(const scenarios::DevicePower& d);

}  // namespace omnilearn::run
