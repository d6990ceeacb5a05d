// Importers for cluster-level GPU occupancy (Philly, Helios): a sticky share of the simulated nodes is taken.
#include <algorithm>

#include "importers.h"
#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::traces::detail {
namespace {

// Reads (time, busy, total) rows by column name and converts busy/total (row by row) to occupancy.
Result<AvailabilityTrace> import_occupancy(const ImportOptions& options, std::string_view busy_col,
                                           std::string_view total_col, std::string_view what) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto columns = read_named_columns(*in, {"time", busy_col, total_col}, "a header " + std::string(what), what);
  if (!columns.is_ok()) return columns.status();
  const std::size_t time = columns->index[0], busy = columns->index[1], total = columns->index[2];
  std::vector<std::pair<Seconds, double>> share;
  Seconds base = 0.0;
  Seconds step = 60.0;
  OMNI_RETURN_IF_ERROR(for_each_record(*in, columns->width, [&](const std::vector<std::string>& f, const std::string&) {
    const auto t = parse_iso_datetime(f[time]);
    if (!t) return in->error("time '" + f[time] + "' is not valid; expected YYYY-MM-DD HH:MM:SS");
    const auto b = parse_double(f[busy]);
    const auto n = parse_double(f[total]);
    if (!b || !n || *b < 0.0 || *n <= 0.0) {
      return in->error(std::string(busy_col) + " '" + f[busy] + "' or " + std::string(total_col) + " '" + f[total] +
                       "' is not valid; expected counts with total > 0");
    }
    if (share.empty()) base = *t;
    const Seconds rel = *t - base;
    if (!share.empty() && rel <= share.back().first) {
      return in->error("time '" + f[time] + "' is not after the previous row; expected rows sorted by time");
    }
    if (share.size() == 1) step = rel;
    share.emplace_back(rel, std::min(1.0, *b / *n));
    return Status::ok();
  }));
  if (share.empty()) return in->error("no data rows; expected one row per minute");
  return occupancy_to_trace(share, options.max_workers, options.seed, share.back().first + step);
}

}  // namespace

Result<AvailabilityTrace> import_philly(const ImportOptions& options) {
  return import_occupancy(options, "active", "total", "'time,active,total' (Philly node sequence)");
}

Result<AvailabilityTrace> import_helios(const ImportOptions& options) {
  return import_occupancy(options, "running_gpu_num", "total_gpu_num",
                          "'time,...,total_gpu_num,running_gpu_num,...' (Helios cluster_sequence_vc.csv)");
}

}  // namespace omnilearn::traces::detail
