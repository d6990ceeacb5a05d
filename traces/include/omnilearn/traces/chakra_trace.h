// ChakraRank: one rank's Chakra execution trace (mlcommons/chakra, schema/protobuf/et_def.proto), the format ASTRA-sim
// replays: a file of length-delimited protobuf messages (a varint length, then the message), a GlobalMetadata first,
// then one Node per operation. Read by a small wire-format reader of our own (no protobuf library); docs/hybrid.md.
// Values and pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::traces {

// et_def.proto's NodeType, with its numbers.
enum class ChakraNodeType : std::uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kCompute = 4,
  kSend = 5,
  kRecv = 6,
  kCollective = 7,
};

// et_def.proto's CollectiveCommType, with its numbers.
enum class ChakraCollective : std::uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

// The schema's names: "COMP_NODE", "ALL_REDUCE".
const char* to_string(ChakraNodeType type);
const char* to_string(ChakraCollective kind);

// One Node message. The attributes ASTRA-sim reads are kept (any integer-typed value of AttributeProto is accepted
// for the integer ones; pg_name takes string_val); other attributes, inputs, outputs and unknown fields are skipped.
struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::kInvalid;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  std::vector<std::uint64_t> data_deps;  // ids of nodes of the same rank, in the file's order
  std::vector<std::uint64_t> ctrl_deps;
  std::optional<ChakraCollective> comm_type;  // collectives
  std::optional<std::uint64_t> comm_size;     // bytes sent, received or reduced
  std::optional<std::int64_t> comm_src;       // a receive's sender rank
  std::optional<std::int64_t> comm_dst;       // a send's receiver rank
  std::optional<std::int64_t> comm_tag;       // matches a send with its receive (absent: 0)
  std::optional<std::uint64_t> num_ops;       // compute nodes' operation count
  std::optional<std::uint64_t> tensor_size;   // memory nodes' bytes
  std::string pg_name;                        // a collective's process group ("": all ranks)
  std::size_t offset = 0;                     // byte offset of the node's length prefix in its file
};

struct ChakraRank {
  std::string version;            // GlobalMetadata.version
  std::vector<ChakraNode> nodes;  // in the file's order
};

// Parses one rank's file held in `bytes`; `source` names it in errors, which read
// "source: byte N: <message or field>: what is wrong". Refused: an empty file, a truncated varint, message or fixed
// value, a length past the end, a wire type that is invalid or not the one a known field has, a group (deprecated
// wire types 3 and 4), a node type outside the schema or INVALID_NODE, a collective kind outside the schema, a send
// without comm_dst, a receive without comm_src, a collective without comm_type, a negative size, rank or count, a
// duplicate node id, a dependency on an id not in the file, a dependency cycle, more than limits::kMaxChakraNodes
// nodes. Unknown fields and attributes are skipped.
Result<ChakraRank> parse_chakra_rank(std::string_view bytes, std::string_view source);

// parse_chakra_rank() on the file at `path`, or an I/O error naming it.
Result<ChakraRank> read_chakra_rank(const std::string& path);

// The file Chakra writes for `rank` of the trace `prefix`: "<prefix>.<rank>.et".
std::string chakra_rank_path(const std::string& prefix, std::size_t rank);

// All ranks of one trace, rank r from index r. `prefix_or_folder` is either a prefix (files "<prefix>.0.et",
// "<prefix>.1.et", ...) or a folder holding the files of exactly one prefix. Refused: no file, a missing rank
// (naming the file expected), several prefixes in a folder (naming them), more than limits::kMaxWorkers ranks, and
// whatever read_chakra_rank() refuses.
Result<std::vector<ChakraRank>> read_chakra_trace(const std::string& prefix_or_folder);

}  // namespace omnilearn::traces
