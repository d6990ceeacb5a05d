// Private pieces shared by the importers: raw per-node series, node selection, and the conversions from
// down intervals or cluster occupancy to per-node availability. Stateless: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/traces/trace_importer.h"

namespace omnilearn::traces::detail {

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
