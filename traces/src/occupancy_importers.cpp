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
  std::string line;
  OMNI_RETURN_IF_ERROR(in->first_record(line, "a header " + std::string(what)));
  const std::vector<std::string> header = split_fields(line);
  const auto time = find_column(header, "time");
  const auto busy = find_column(header, busy_col);
  const auto total = find_column(header, total_col);
  if (!time || !busy || !total) {
    return in->error("header '" + line.substr(0, 60) + "' lacks time, " + std::string(busy_col) + " or " +
                     std::string(total_col) + "; expected " + std::string(what));
  }
  std::vector<std::pair<Seconds, double>> share;
  Seconds base = 0.0;
  Seconds step = 60.0;
  while (in->next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != header.size()) {
      return in->error("row has " + std::to_string(f.size()) + " fields; expected " + std::to_string(header.size()));
    }
    const auto t = parse_iso_datetime(f[*time]);
    if (!t) return in->error("time '" + f[*time] + "' is not valid; expected YYYY-MM-DD HH:MM:SS");
    const auto b = parse_double(f[*busy]);
    const auto n = parse_double(f[*total]);
    if (!b || !n || *b < 0.0 || *n <= 0.0) {
      return in->error(std::string(busy_col) + " '" + f[*busy] + "' or " + std::string(total_col) + " '" + f[*total] +
                       "' is not valid; expected counts with total > 0");
    }
    if (share.empty()) base = *t;
    const Seconds rel = *t - base;
    if (!share.empty() && rel <= share.back().first) {
      return in->error("time '" + f[*time] + "' is not after the previous row; expected rows sorted by time");
    }
    if (share.size() == 1) step = rel;
    share.emplace_back(rel, std::min(1.0, *b / *n));
  }
  OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
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
