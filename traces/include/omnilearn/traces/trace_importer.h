// Importers that turn the raw public traces (../shared/traces-raw, each folder's SOURCE.md) into an
// AvailabilityTrace. One entry point, import_trace(); stateless: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::traces {

enum class ImportFormat {
  kAzureV1,          // azure-v1: wide CSV time_s,vm_<id>...; avail = 1 - cpu%/100; workers vm_<id>
  kBitbrains,        // bitbrains: one ';'-separated file per VM (input: a file or a folder of them); vm_<id>
  kAlibaba2018,      // alibaba-2018: cluster-average CPU %, no time column (300 s rows); the same on every node
  kAlibabaGenAI,     // alibaba-genai: long CSV value,timestamp_anon,container_ip; pod_<first 8 hex of hash>
  kPhilly,           // philly: time,active,total; a sticky share active/total of the nodes is taken (0)
  kHelios,           // helios: cluster_sequence_vc.csv; share running_gpu_num/total_gpu_num of nodes taken
  kAzureNoise2024,   // azure-noise: value,runtime,starttime,VM_id; min(1, value / that VM's median); vm_<id>
  kLanl,             // lanl: LANL failures; node_<nodenumz> of one system down in [Prob Started, Prob Fixed)
  kTitan,            // titan: gc_full.csv; a slot is down from a DBE/OTB removal to the next insert there
  kAlibaba2017,      // alibaba-2017: server_event.csv; machine_<id> down for repair_time_s after an error
};

// "azure-v1", "bitbrains", ... as listed above; the CLI's --format names.
std::string_view import_format_name(ImportFormat format);
std::optional<ImportFormat> parse_import_format(std::string_view name);
std::vector<ImportFormat> all_import_formats();

enum class NodeSelection {
  kSourceOrder,  // the first nodes in the order the source lists them (numeric id order for LANL)
  kMostActive,   // the most eventful nodes: highest mean load, or most failures; ties in source order
};

struct ImportOptions {
  ImportFormat format = ImportFormat::kAzureV1;
  std::string input;  // the raw file (for Bitbrains, a file or a folder of *.csv)
  // Nodes to keep (0 = all). For the cluster-level formats (alibaba-2018, philly, helios) this is the
  // number of simulated nodes to produce, and 0 means 16.
  std::size_t max_workers = 16;
  NodeSelection selection = NodeSelection::kSourceOrder;
  // Explicit source nodes by their trace names (vm_17, node_3, c0-0c0s1n2, ...); overrides `selection`.
  std::vector<std::string> nodes;
  std::string lanl_system = "20";  // LANL: the System column to import
  Seconds repair_time_s = 600.0;   // alibaba-2017: how long a machine stays down after an error event
  std::uint64_t seed = 1;          // philly, helios: which nodes get taken (sticky, seeded)
};

// Imports options.input as options.format says. Time 0 is the earliest time in the imported source (for the
// failure logs: of the selected system or of the whole log). A malformed file gives "path:line: what was
// wrong, what was expected" for the first line that could not be read.
Result<AvailabilityTrace> import_trace(const ImportOptions& options);

}  // namespace omnilearn::traces
