// Test-only writer of Chakra execution traces: encodes ChakraRank values in the wire format Chakra's encode_message
// writes (a varint length, then the message; GlobalMetadata first, then the nodes), so that tests make their own
// fixtures. Attributes are written as Chakra's converter writes them (int64_val, pg_name as string_val).
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/traces/chakra_trace.h"

namespace omnilearn::traces::testing {

inline std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

inline std::string key(std::uint64_t field, int wire) {
  return varint((field << 3) | static_cast<std::uint64_t>(wire));
}

inline std::string length_delimited(std::uint64_t field, std::string_view body) {
  return key(field, 2) + varint(body.size()) + std::string(body);
}

inline std::string varint_field(std::uint64_t field, std::uint64_t v) { return key(field, 0) + varint(v); }

inline std::string int64_attr(std::string_view name, std::int64_t v) {
  return length_delimited(1, name) + varint_field(9, static_cast<std::uint64_t>(v));
}

inline std::string encode_metadata(std::string_view version) {
  return version.empty() ? std::string() : length_delimited(1, version);
}

inline std::string encode_node(const ChakraNode& n) {
  std::string m;
  if (n.id != 0) m += varint_field(1, n.id);
  if (!n.name.empty()) m += length_delimited(2, n.name);
  if (n.type != ChakraNodeType::kInvalid) m += varint_field(3, static_cast<std::uint64_t>(n.type));
  const auto packed = [&](std::uint64_t field, const std::vector<std::uint64_t>& deps) {
    if (deps.empty()) return;
    std::string body;
    for (std::uint64_t d : deps) body += varint(d);
    m += length_delimited(field, body);
  };
  packed(4, n.ctrl_deps);
  packed(5, n.data_deps);
  if (n.start_time_micros != 0) m += varint_field(6, n.start_time_micros);
  if (n.duration_micros != 0) m += varint_field(7, n.duration_micros);
  const auto attr = [&](std::string_view name, std::int64_t v) { m += length_delimited(10, int64_attr(name, v)); };
  if (n.comm_type) attr("comm_type", static_cast<std::int64_t>(*n.comm_type));
  if (n.comm_size) attr("comm_size", static_cast<std::int64_t>(*n.comm_size));
  if (n.comm_src) attr("comm_src", *n.comm_src);
  if (n.comm_dst) attr("comm_dst", *n.comm_dst);
  if (n.comm_tag) attr("comm_tag", *n.comm_tag);
  if (n.num_ops) attr("num_ops", static_cast<std::int64_t>(*n.num_ops));
  if (n.tensor_size) attr("tensor_size", static_cast<std::int64_t>(*n.tensor_size));
  if (!n.pg_name.empty()) m += length_delimited(10, length_delimited(1, "pg_name") + length_delimited(29, n.pg_name));
  return m;
}

// One rank's file: each message behind its varint length.
inline std::string encode_rank(const ChakraRank& rank) {
  std::string out;
  const std::string meta = encode_metadata(rank.version);
  out += varint(meta.size()) + meta;
  for (const ChakraNode& n : rank.nodes) {
    const std::string m = encode_node(n);
    out += varint(m.size()) + m;
  }
  return out;
}

// Writes each rank to chakra_rank_path(prefix, r).
inline void write_trace(const std::string& prefix, const std::vector<ChakraRank>& ranks) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::ofstream(chakra_rank_path(prefix, r), std::ios::binary) << encode_rank(ranks[r]);
  }
}

// Node builders for the tests.
inline ChakraNode comp(std::uint64_t id, std::uint64_t micros, std::vector<std::uint64_t> deps = {}) {
  ChakraNode n;
  n.id = id;
  n.name = "comp" + std::to_string(id);
  n.type = ChakraNodeType::kCompute;
  n.duration_micros = micros;
  n.data_deps = std::move(deps);
  return n;
}

inline ChakraNode coll(std::uint64_t id, ChakraCollective kind, std::uint64_t bytes,
                       std::vector<std::uint64_t> deps = {}) {
  ChakraNode n;
  n.id = id;
  n.name = "coll" + std::to_string(id);
  n.type = ChakraNodeType::kCollective;
  n.comm_type = kind;
  n.comm_size = bytes;
  n.data_deps = std::move(deps);
  return n;
}

inline ChakraNode send(std::uint64_t id, std::int64_t dst, std::uint64_t bytes, std::vector<std::uint64_t> deps = {},
                       std::int64_t tag = 0) {
  ChakraNode n;
  n.id = id;
  n.name = "send" + std::to_string(id);
  n.type = ChakraNodeType::kSend;
  n.comm_dst = dst;
  n.comm_size = bytes;
  n.comm_tag = tag;
  n.data_deps = std::move(deps);
  return n;
}

inline ChakraNode recv(std::uint64_t id, std::int64_t src, std::uint64_t bytes, std::vector<std::uint64_t> deps = {},
                       std::int64_t tag = 0) {
  ChakraNode n;
  n.id = id;
  n.name = "recv" + std::to_string(id);
  n.type = ChakraNodeType::kRecv;
  n.comm_src = src;
  n.comm_size = bytes;
  n.comm_tag = tag;
  n.data_deps = std::move(deps);
  return n;
}

}  // namespace omnilearn::traces::testing
