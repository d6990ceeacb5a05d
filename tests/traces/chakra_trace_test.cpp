#include "omnilearn/traces/chakra_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "chakra_fixture.h"

namespace omnilearn::traces {
namespace {

namespace fs = std::filesystem;
using testing::comp;
using testing::encode_node;
using testing::encode_rank;
using testing::key;
using testing::length_delimited;
using testing::varint;
using testing::varint_field;

ChakraRank sample_rank() {
  ChakraRank r;
  r.version = "0.0.4";
  r.nodes.push_back(comp(1, 150));
  r.nodes.back().num_ops = 1'000'000;
  r.nodes.push_back(testing::coll(2, ChakraCollective::kAllReduce, 1 << 20, {1}));
  r.nodes.back().pg_name = "dp";
  r.nodes.push_back(testing::send(3, 1, 4096, {1}, /*tag=*/7));
  r.nodes.push_back(testing::recv(4, 1, 4096, {}, /*tag=*/-2));
  r.nodes.back().ctrl_deps = {3};
  ChakraNode mem;
  mem.id = 5;
  mem.type = ChakraNodeType::kMemLoad;
  mem.tensor_size = 64;
  mem.data_deps = {2, 4};
  r.nodes.push_back(mem);
  return r;
}

// The file as messages: the offsets where each length prefix starts, and the end.
std::set<std::size_t> message_boundaries(const std::string& file) {
  std::set<std::size_t> out;
  std::size_t pos = 0;
  while (pos < file.size()) {
    out.insert(pos);
    std::uint64_t len = 0;
    int shift = 0;
    while ((static_cast<std::uint8_t>(file[pos]) & 0x80) != 0) {
      len |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(file[pos++]) & 0x7f) << shift;
      shift += 7;
    }
    len |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(file[pos++])) << shift;
    pos += len;
  }
  out.insert(file.size());
  return out;
}

std::string with_messages(const std::string& meta, const std::vector<std::string>& nodes) {
  std::string out = varint(meta.size()) + meta;
  for (const std::string& n : nodes) out += varint(n.size()) + n;
  return out;
}

std::string error_of(const std::string& bytes) {
  auto r = parse_chakra_rank(bytes, "t.0.et");
  return r.is_ok() ? std::string("ok") : r.status().message();
}

TEST(ChakraTrace, RoundTripsThroughTheWriter) {
  const ChakraRank want = sample_rank();
  const std::string file = encode_rank(want);
  auto got = parse_chakra_rank(file, "t.0.et");
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(got->version, "0.0.4");
  ASSERT_EQ(got->nodes.size(), want.nodes.size());
  for (std::size_t i = 0; i < want.nodes.size(); ++i) {
    const ChakraNode& a = want.nodes[i];
    const ChakraNode& b = got->nodes[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.duration_micros, b.duration_micros);
    EXPECT_EQ(a.data_deps, b.data_deps);
    EXPECT_EQ(a.ctrl_deps, b.ctrl_deps);
    EXPECT_EQ(a.comm_type, b.comm_type);
    EXPECT_EQ(a.comm_size, b.comm_size);
    EXPECT_EQ(a.comm_src, b.comm_src);
    EXPECT_EQ(a.comm_dst, b.comm_dst);
    EXPECT_EQ(a.comm_tag, b.comm_tag);
    EXPECT_EQ(a.num_ops, b.num_ops);
    EXPECT_EQ(a.tensor_size, b.tensor_size);
    EXPECT_EQ(a.pg_name, b.pg_name);
  }
  EXPECT_EQ(got->nodes[0].offset, 8u);  // after the metadata: its length (1 byte), key, length and "0.0.4"
}

TEST(ChakraTrace, EveryTruncationIsAnErrorNamingTheFileOrAShorterValidFile) {
  ChakraRank r = sample_rank();
  r.nodes[0].ctrl_deps = {5};  // a forward reference: dropping the last node breaks the first
  r.nodes[4].data_deps = {};
  const std::string file = encode_rank(r);
  ASSERT_TRUE(parse_chakra_rank(file, "t.0.et").is_ok());
  const std::set<std::size_t> boundaries = message_boundaries(file);
  for (std::size_t cut = 0; cut < file.size(); ++cut) {
    SCOPED_TRACE(cut);
    auto got = parse_chakra_rank(std::string_view(file).substr(0, cut), "t.0.et");
    if (boundaries.count(cut) != 0 && cut > 0 && cut <= *std::next(boundaries.begin())) {
      EXPECT_TRUE(got.is_ok()) << got.status().message();  // the metadata alone
      continue;
    }
    ASSERT_FALSE(got.is_ok());
    EXPECT_NE(got.status().message().find("t.0.et: byte "), std::string::npos) << got.status().message();
  }
}

TEST(ChakraTrace, RefusesALengthPastTheEnd) {
  const std::string node = encode_node(comp(1, 10));
  std::string file = varint(0) + varint(node.size() + 100) + node;
  EXPECT_EQ(error_of(file), "t.0.et: byte 1: node 0 message: length " + std::to_string(node.size() + 100) +
                                " runs past the end (" + std::to_string(node.size()) + " bytes left)");
  // A name whose length runs past its node's message (though not past the file).
  std::string bad = varint_field(1, 1) + key(2, 2) + varint(50) + "abc";
  file = with_messages("", {bad}) + std::string(60, '\0');
  EXPECT_NE(error_of(file).find("node 0 field 'name': length 50 runs past the end (3 bytes left)"), std::string::npos)
      << error_of(file);
}

TEST(ChakraTrace, RefusesBadVarintsWireTypesAndGroups) {
  EXPECT_EQ(error_of(std::string(11, '\xff')),
            "t.0.et: byte 0: GlobalMetadata message length: varint longer than 64 bits");
  EXPECT_EQ(error_of("\x80"), "t.0.et: byte 0: GlobalMetadata message length: truncated varint");
  EXPECT_EQ(error_of(""), "t.0.et: byte 0: GlobalMetadata: empty file, expected a GlobalMetadata message first");
  // id as a length-delimited field
  std::string file = with_messages("", {length_delimited(1, "x") + varint_field(3, 4)});
  EXPECT_EQ(error_of(file), "t.0.et: byte 2: node 0 field 'id': wire type length-delimited (2), expected varint (0)");
  file = with_messages("", {key(12, 3) + key(12, 4)});
  EXPECT_EQ(error_of(file), "t.0.et: byte 2: node 0: field 12 uses the deprecated group wire type");
  file = with_messages("", {key(12, 7)});
  EXPECT_EQ(error_of(file), "t.0.et: byte 2: node 0: field 12 has invalid wire type 7");
  file = with_messages("", {key(0, 0) + varint(1)});
  EXPECT_EQ(error_of(file), "t.0.et: byte 2: node 0: field number 0 is not valid");
}

TEST(ChakraTrace, SkipsUnknownFieldsAndAcceptsUnpackedDependencies) {
  const std::string unknown =
      varint_field(40, 99) + key(41, 1) + std::string(8, 'x') + length_delimited(42, "zz") + key(43, 5) + "abcd";
  const std::string attr = length_delimited(1, "comm_size") + unknown + varint_field(13, 512);
  const std::string other_attr = length_delimited(1, "involved_dim") + length_delimited(28, "\x01\x00");
  const std::string node2 = varint_field(1, 2) + unknown + varint_field(3, 7) + length_delimited(10, attr) +
                            length_delimited(10, other_attr) +
                            length_delimited(10, testing::int64_attr("comm_type", 2)) + varint_field(5, 1) +
                            varint_field(5, 1) + varint_field(4, 1) + length_delimited(8, "inputs");
  const std::string file = with_messages(length_delimited(1, "v") + unknown, {encode_node(comp(1, 3)), node2});
  auto got = parse_chakra_rank(file, "t.0.et");
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got->nodes.size(), 2u);
  EXPECT_EQ(got->version, "v");
  EXPECT_EQ(got->nodes[1].type, ChakraNodeType::kCollective);
  EXPECT_EQ(got->nodes[1].comm_type, ChakraCollective::kAllGather);
  EXPECT_EQ(got->nodes[1].comm_size, 512u);
  EXPECT_EQ(got->nodes[1].data_deps, (std::vector<std::uint64_t>{1, 1}));
  EXPECT_EQ(got->nodes[1].ctrl_deps, (std::vector<std::uint64_t>{1}));
}

TEST(ChakraTrace, ReadsEachIntegerKindOfAttribute) {
  const auto attr = [](const char* name, const std::string& value) {
    return length_delimited(10, length_delimited(1, name) + value);
  };
  const std::string node = varint_field(1, 1) + varint_field(3, 6) +
                           attr("comm_src", key(19, 5) + std::string("\x03\x00\x00\x00", 4)) +  // fixed32 3
                           attr("comm_tag", varint_field(15, 5)) +                              // sint32 -3
                           attr("comm_size", key(21, 1) + std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8)) +
                           attr("num_ops", varint_field(27, 1));  // bool
  auto got = parse_chakra_rank(with_messages("", {node}), "t.0.et");
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(got->nodes[0].comm_src, 3);
  EXPECT_EQ(got->nodes[0].comm_tag, -3);
  EXPECT_EQ(got->nodes[0].comm_size, 256u);
  EXPECT_EQ(got->nodes[0].num_ops, 1u);
}

TEST(ChakraTrace, RefusesBadAttributes) {
  // One attribute on a collective; its value's key is at byte 8 + 2 + the name's length.
  const auto file = [](const std::string& attr_body) {
    return with_messages("", {varint_field(1, 1) + varint_field(3, 7) + length_delimited(10, attr_body)});
  };
  EXPECT_EQ(error_of(file(testing::int64_attr("comm_type", 12))),
            "t.0.et: byte 19: node 0 attr 0 ('comm_type'): is 12, expected at most 9");
  EXPECT_EQ(error_of(file(length_delimited(1, "comm_type") + key(3, 1) + std::string(8, '\0'))),
            "t.0.et: byte 19: node 0 attr 0 ('comm_type'): expected an integer value, got double_val");
  EXPECT_EQ(error_of(file(testing::int64_attr("comm_size", -5))),
            "t.0.et: byte 19: node 0 attr 0 ('comm_size'): is -5, expected >= 0");
  EXPECT_EQ(error_of(file(length_delimited(1, "comm_type") + key(9, 2))),
            "t.0.et: byte 19: node 0 attr 0 field 'int64_val': wire type length-delimited (2), expected varint (0)");
  EXPECT_EQ(error_of(file(length_delimited(1, "pg_name") + varint_field(9, 2))),
            "t.0.et: byte 17: node 0 attr 0 ('pg_name'): expected string_val, got int64_val");
}

TEST(ChakraTrace, RefusesBadNodes) {
  const auto one = [](ChakraNode n) { return error_of(with_messages("", {encode_node(n)})); };
  ChakraNode n = comp(3, 1);
  n.type = ChakraNodeType::kInvalid;
  EXPECT_EQ(one(n), "t.0.et: byte 1: node 0 (id 3) field 'type': INVALID_NODE or absent");
  EXPECT_EQ(error_of(with_messages("", {varint_field(1, 3) + varint_field(3, 8)})),
            "t.0.et: byte 4: node 0 field 'type': 8 is not a NodeType (1..7)");
  n = testing::send(3, 1, 8);
  n.comm_dst.reset();
  EXPECT_EQ(one(n), "t.0.et: byte 1: node 0 (id 3) attr 'comm_dst': a COMM_SEND_NODE needs it");
  n = testing::recv(3, 1, 8);
  n.comm_src.reset();
  EXPECT_EQ(one(n), "t.0.et: byte 1: node 0 (id 3) attr 'comm_src': a COMM_RECV_NODE needs it");
  n = testing::coll(3, ChakraCollective::kBarrier, 0);
  n.comm_type.reset();
  EXPECT_EQ(one(n), "t.0.et: byte 1: node 0 (id 3) attr 'comm_type': a COMM_COLL_NODE needs it");
}

TEST(ChakraTrace, RefusesDuplicateIdsUnknownDependenciesAndCycles) {
  ChakraRank r;
  r.nodes = {comp(1, 1), comp(1, 2)};
  const std::string second = std::to_string(2 + encode_node(comp(1, 1)).size());  // node 1's offset
  EXPECT_EQ(error_of(encode_rank(r)),
            "t.0.et: byte " + second + ": node 1 (id 1) field 'id': duplicate id: node 0 at byte 1 has it too");
  r.nodes = {comp(1, 1), comp(2, 2, {9})};
  EXPECT_EQ(error_of(encode_rank(r)), "t.0.et: byte " + second + ": node 1 (id 2) field 'data_deps': no node has id 9");
  r.nodes = {comp(1, 1, {3}), comp(2, 2, {1}), comp(3, 3, {2}), comp(4, 4, {3})};
  const std::string err = error_of(encode_rank(r));
  EXPECT_NE(err.find("t.0.et: byte 1: node 0 (id 1) fields 'data_deps'/'ctrl_deps': dependency cycle through ids "
                     "1 -> 3 -> 2 -> 1 (each waits for the next)"),
            std::string::npos)
      << err;
  r.nodes = {comp(1, 1)};
  r.nodes[0].ctrl_deps = {1};
  EXPECT_EQ(error_of(encode_rank(r)),
            "t.0.et: byte 1: node 0 (id 1) fields 'data_deps'/'ctrl_deps': dependency cycle through ids 1 -> 1 (each "
            "waits for the next)");
}

class ChakraTraceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("chakra-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ChakraTraceFiles, ReadsAllRanksByPrefixOrFolder) {
  ChakraRank r0, r1;
  r0.nodes = {comp(1, 10)};
  r1.nodes = {comp(1, 20), comp(2, 30, {1})};
  testing::write_trace((dir_ / "job").string(), {r0, r1});
  for (const fs::path& p : {dir_ / "job", dir_, dir_ / "job.1.et"}) {
    auto got = read_chakra_trace(p.string());
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ((*got)[1].nodes.size(), 2u);
  }
  EXPECT_EQ(chakra_rank_path("a/b", 3), "a/b.3.et");
}

TEST_F(ChakraTraceFiles, RefusesMissingRanksAndSeveralTraces) {
  ChakraRank r;
  r.nodes = {comp(1, 10)};
  testing::write_trace((dir_ / "job").string(), {r, r, r});
  fs::remove(dir_ / "job.1.et");
  auto got = read_chakra_trace((dir_ / "job").string());
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("rank 1's file " + (dir_ / "job.1.et").string() + " is missing"),
            std::string::npos)
      << got.status().message();
  testing::write_trace((dir_ / "other").string(), {r});
  got = read_chakra_trace(dir_.string());
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("prefixes 'job', 'other'"), std::string::npos) << got.status().message();
  got = read_chakra_trace((dir_ / "none").string());
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find("none.0.et"), std::string::npos) << got.status().message();
  std::ofstream(dir_ / "other.0.et", std::ios::binary) << "\x05\x0a";
  got = read_chakra_trace((dir_ / "other").string());
  ASSERT_FALSE(got.is_ok());
  EXPECT_NE(got.status().message().find((dir_ / "other.0.et").string() + ": byte 0:"), std::string::npos)
      << got.status().message();
}

}  // namespace
}  // namespace omnilearn::traces
