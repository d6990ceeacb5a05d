// Sailor's measured hybrid-parallel plans and its network model, the reference data of pipeline × tensor × data
// parallel jobs (docs/hybrid.md): the 27 GH200 plans with their measured iteration seconds
// (traces/devices/sailor-gh200-plans.csv), GPUs per node and memory per GPU kind (sailor-kinds.csv), and the fitted
// bandwidth per kind, scope and group size (sailor-network.csv), all derived by scripts/sailor-plans.py.
// Plain values and an immutable SailorNetwork: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// The columns of the three tables, in order.
inline constexpr std::string_view kSailorPlansHeader =
    "model,file,nodes,gpus,kind,pp,tp,dp,micro_batch,global_batch,layers_per_stage,measured_iteration_s,"
    "measured_red_grads_s,measured_max_mem_bytes,note";
inline constexpr std::string_view kSailorKindsHeader = "kind,gpus_per_node,memory_bytes";
inline constexpr std::string_view kSailorNetworkHeader = "kind,scope,gpus,c2,c1,c0,max_bandwidth_bytes_per_s";

// The layers first..last (inclusive) of one pipeline stage; 0 is the embedding, the model's last the output head.
struct LayerRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

// One measured plan: pp stages of tp GPUs each, replicated dp times (gpus = pp x tp x dp, on `nodes` nodes).
struct SailorPlan {
  std::string model;  // as sailor-layers.csv names it (OPT-350, GPT-Neo-2.7)
  std::string file;   // the raw file, relative to ../shared/traces-raw/sailor-sosp25/
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  std::string kind;  // Sailor's GPU kind (GH-96)
  std::int64_t pp = 0;
  std::int64_t tp = 0;
  std::int64_t dp = 0;
  std::int64_t micro_batch = 0;
  std::int64_t global_batch = 0;   // a multiple of micro_batch x dp
  std::vector<LayerRange> stages;  // pp runs covering layers 0..n-1 in order
  Seconds measured_iteration_s = 0.0;
  Seconds measured_red_grads_s = 0.0;  // the gradient reduction
  double measured_max_mem_bytes = 0.0;
  std::string note;  // the raw file's quirks and how they were read; empty when none
};

// One GPU kind of Sailor's cluster configuration.
struct SailorKind {
  std::string kind;
  std::int64_t gpus_per_node = 0;
  double memory_bytes = 0.0;  // per GPU
};

enum class NetworkScope {
  kIntra,  // between GPUs of one node
  kInter,  // between two nodes
};

// One fitted link of sailor-network.csv: the bandwidth polynomial c2·x² + c1·x + c0 (GB/s, x = log2 of the message
// in MB) and the largest bandwidth measured.
struct SailorLink {
  std::string kind;
  NetworkScope scope = NetworkScope::kIntra;
  std::int64_t gpus = 0;  // intra: GPUs of the node taking part; inter: GPUs per node, each sending to a peer
  double c2 = 0.0;
  double c1 = 0.0;
  double c0 = 0.0;
  double max_bandwidth_bytes_per_s = 0.0;
};

// Sailor's bandwidth for a message of `message_bytes` on `link`, evaluated as Sailor does
// (sailor/providers/gcp/model_networking.py:4-11, sailor/Planner/sailor_planner/cpp_src/utils/network_utils.cpp:23-31):
// 1e9 x (c2·x² + c1·x + c0) bytes/s with x = log2(message_bytes / 1e6), not capped by max_bandwidth_bytes_per_s (the
// fit covers 2^16..2^30 bytes). Errors: a message that is not a positive finite number of bytes, or one where the
// polynomial is not positive (Sailor would return a negative or infinite time).
Result<double> sailor_bandwidth_bytes_per_s(const SailorLink& link, double message_bytes);

class SailorNetwork {
 public:
  // Checks the links: one row per (kind, scope, gpus), gpus >= 1, finite coefficients, a positive peak.
  static Result<SailorNetwork> create(std::vector<SailorLink> links);

  // sailor_bandwidth_bytes_per_s() of the link (kind, scope, group_size); an unknown kind, or a group size not
  // measured for it at that scope, is an error naming what is measured (no interpolation between sizes).
  Result<double> bandwidth_bytes_per_s(const std::string& kind, NetworkScope scope, std::int64_t group_size,
                                       double message_bytes) const;
  // The link itself, with the same errors.
  Result<SailorLink> link(const std::string& kind, NetworkScope scope, std::int64_t group_size) const;
  // The kinds, in increasing order.
  std::vector<std::string> kinds() const;

 private:
  std::map<std::tuple<std::string, NetworkScope, std::int64_t>, SailorLink> links_;
};

// Parse the tables (comments start with '#'; errors read "source:line: field 'value' is not valid; expected ..."), and
// read them from files. A plan row is refused when gpus is not pp x tp x dp, global_batch not a multiple of
// micro_batch x dp, or layers_per_stage ("a-b;c-d", inclusive) is not pp runs covering 0..n-1 in order.
Result<std::vector<SailorPlan>> parse_sailor_plans(std::string_view text, std::string_view source);
Result<std::vector<SailorKind>> parse_sailor_kinds(std::string_view text, std::string_view source);
Result<std::vector<SailorLink>> parse_sailor_network(std::string_view text, std::string_view source);
Result<std::vector<SailorPlan>> read_sailor_plans(const std::string& path);
Result<std::vector<SailorKind>> read_sailor_kinds(const std::string& path);
// The links of `path` as a SailorNetwork (errors of create() name the file).
Result<SailorNetwork> read_sailor_network(const std::string& path);

// "intra" or "inter"; the scope named by `name`, or an error naming the two.
std::string_view scope_name(NetworkScope scope);
Result<NetworkScope> parse_network_scope(std::string_view name);

}  // namespace omnilearn::traces
