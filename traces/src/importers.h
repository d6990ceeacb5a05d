// Private pieces shared by the importers: reading a source's header and records, raw per-node series, node
// selection, and the conversions from down intervals or cluster occupancy to per-node availability. Stateless:
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/trace_importer.h"

namespace omnilearn::traces::detail {

// The columns a header was searched for: their indexes in the order asked, and the header's field count.
struct Columns {
  std::vector<std::size_t> index;
  std::size_t width = 0;
};

// Reads the header record (an empty file: "path:0: file is empty; expected " + `first`) and finds each of `names`
// in it, or fails with "path:1: header '<its first 60 characters>' lacks A, B or C; expected " + `what`.
Result<Columns> read_named_columns(LineReader& in, std::initializer_list<std::string_view> names,
                                   std::string_view first, std::string_view what);

// Calls `row(fields, record)` for each further record that is not blank, split on commas, and stops at the first
// error it returns. A record of other than `width` fields fails with "path:N: row has K fields; expected W".
// Returns ok, that first error, or the error that ended the reading (in.status()).
Status for_each_record(LineReader& in, std::size_t width,
                       const std::function<Status(const std::vector<std::string>&, const std::string&)>& row);

// One source node before selection. `score` ranks nodes for NodeSelection::kMostActive (higher first).
struct RawSeries {
  std::string name;
  std::vector<TracePoint> points;  // sorted by time; equal fractions may repeat
  double score = 0.0;
};

// availability = 1 - utilisation_percent / 100, clamped to [0,1] and rounded to 1e-5.
double availability_from_percent(double percent);

// Selects nodes as options say (explicit names, most active or source order, at most max_workers) and
// builds the trace with the given duration.
Result<AvailabilityTrace> select_and_build(std::vector<RawSeries> nodes, const ImportOptions& options,
                                           Seconds duration_s);

// Points for a node that is up (1) except during the union of the [start, end) intervals (shifted by -base).
std::vector<TracePoint> points_from_down_intervals(std::vector<std::pair<Seconds, Seconds>> intervals);

// Cluster-level occupancy: at time t a share taken(t) in [0,1] of `nodes` nodes is used by other tenants.
// round(share * nodes) nodes are down; a taken node stays taken until the count falls (sticky), and which
// node is taken or released is drawn with `seed`.
Result<AvailabilityTrace> occupancy_to_trace(const std::vector<std::pair<Seconds, double>>& share,
                                             std::size_t nodes, std::uint64_t seed, Seconds duration_s);

Result<AvailabilityTrace> import_azure_v1(const ImportOptions& options);
Result<AvailabilityTrace> import_bitbrains(const ImportOptions& options);
Result<AvailabilityTrace> import_alibaba_2018(const ImportOptions& options);
Result<AvailabilityTrace> import_alibaba_genai(const ImportOptions& options);
Result<AvailabilityTrace> import_azure_noise_2024(const ImportOptions& options);
Result<AvailabilityTrace> import_philly(const ImportOptions& options);
Result<AvailabilityTrace> import_helios(const ImportOptions& options);
Result<AvailabilityTrace> import_lanl(const ImportOptions& options);
Result<AvailabilityTrace> import_titan(const ImportOptions& options);
Result<AvailabilityTrace> import_alibaba_2017(const ImportOptions& options);

}  // namespace omnilearn::traces::detail
