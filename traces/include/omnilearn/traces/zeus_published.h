// ZeusPublishedSaving: the energy savings Zeus's paper published per workload (traces/devices/zeus-published.csv,
// hand-written with each row's source), with the job each was measured for: the reference energy_to_accuracy() is
// checked against (docs/energy.md, "Energy to accuracy from Zeus's measured epochs"). Plain values: thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/energy_to_accuracy.h"

namespace omnilearn::traces {

// The columns of zeus-published.csv, in order.
inline constexpr std::string_view kZeusPublishedHeader =
    "kind,dataset,network,optimizer,target_metric,max_epochs,default_batch,batch_saving_pct,limit_saving_pct,"
    "both_saving_pct,source";

// One workload's published savings against the default batch at the largest power limit, in percent of its energy
// to the target: choosing the batch alone (at the largest limit), the limit alone (at the default batch), both.
struct ZeusPublishedSaving {
  std::string kind;  // as GpuPowerTable names it (v100)
  ZeusJob job;
  double batch_saving_pct = 0.0;
  double limit_saving_pct = 0.0;
  double both_saving_pct = 0.0;
  std::string source;  // the figure or file the savings are from
};

// Parse the table (comments start with '#'; errors read "source:line: field 'value' is not valid; expected ..."),
// and read it from a file. A row is refused when a name is empty or holds '/', the target is not a finite number,
// max_epochs or default_batch is not a whole number >= 1, a saving is not a number below 100, or the source is empty.
Result<std::vector<ZeusPublishedSaving>> parse_zeus_published(std::string_view text, std::string_view source);
Result<std::vector<ZeusPublishedSaving>> read_zeus_published(const std::string& path);

}  // namespace omnilearn::traces
