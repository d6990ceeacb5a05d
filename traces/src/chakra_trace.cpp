#include "omnilearn/traces/chakra_trace.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/traces/text_file.h"
#include "protobuf_wire.h"

namespace omnilearn::traces {
namespace {

using detail::Cursor;
using detail::Key;
using detail::kFixed32;
using detail::kFixed64;
using detail::kLength;
using detail::kVarint;

// One AttributeProto's name and value, as far as the importer needs it.
struct Attr {
  enum class Kind { kNone, kSigned, kUnsigned, kString, kOther };
  std::string name;
  Kind kind = Kind::kNone;
  std::int64_t s = 0;
  std::uint64_t u = 0;
  std::string str;
  const char* value_field = "no value";  // the oneof member that was set ("int64_val")
  std::size_t at = 0;                    // the value's offset
};

// Reads the messages of et_def.proto this importer needs (GlobalMetadata, Node, AttributeProto).
class WireParser : public detail::WireReader {
 public:
  using WireReader::WireReader;

  Result<ChakraRank> parse();

 private:
  Result<std::string> metadata(Cursor c) const;
  Result<Attr> attribute(Cursor c, const std::string& where) const;
  Status deps(Cursor& c, const Key& k, const std::string& where, std::vector<std::uint64_t>& out) const;
  Result<ChakraNode> node(Cursor c, std::size_t index) const;
  Status apply(const Attr& a, ChakraNode& n, const std::string& where) const;
  Status check_node(const ChakraNode& n, std::size_t index) const;
  Status check_graph(const ChakraRank& rank) const;
};

Result<std::string> WireParser::metadata(Cursor c) const {
  std::string version;
  while (!c.done()) {
    auto k = key(c, "GlobalMetadata");
    if (!k) return k.status();
    if (k->field == 1) {
      auto v = text(c, *k, "GlobalMetadata field 'version'");
      if (!v) return v.status();
      version = std::move(*v);
    } else if (k->field == 2) {  // attributes: checked, not kept
      OMNI_RETURN_IF_ERROR(expect(*k, kLength, "GlobalMetadata field 'attr'"));
      auto s = sub(c, "GlobalMetadata field 'attr'");
      if (!s) return s.status();
      OMNI_RETURN_IF_ERROR(attribute(*s, "GlobalMetadata attr").status());
    } else {
      OMNI_RETURN_IF_ERROR(skip(c, *k, "GlobalMetadata"));
    }
  }
  return version;
}

Result<Attr> WireParser::attribute(Cursor c, const std::string& where) const {
  // The oneof's scalar members by field number: name and wire type (lists, the even numbers 4..32, are skipped).
  struct Scalar {
    const char* name;
    int wire;
  };
  static constexpr Scalar kScalars[] = {
      {"double_val", kFixed64},  {"float_val", kFixed32},   {"int32_val", kVarint},     {"int64_val", kVarint},
      {"uint32_val", kVarint},   {"uint64_val", kVarint},   {"sint32_val", kVarint},    {"sint64_val", kVarint},
      {"fixed32_val", kFixed32}, {"fixed64_val", kFixed64}, {"sfixed32_val", kFixed32}, {"sfixed64_val", kFixed64},
      {"bool_val", kVarint},     {"string_val", kLength},   {"bytes_val", kLength}};
  Attr a;
  while (!c.done()) {
    auto k = key(c, where);
    if (!k) return k.status();
    if (k->field == 1 || k->field == 2) {
      auto s = text(c, *k, where + (k->field == 1 ? " field 'name'" : " field 'doc_string'"));
      if (!s) return s.status();
      if (k->field == 1) a.name = std::move(*s);
      continue;
    }
    if (k->field < 3 || k->field > 32) {
      OMNI_RETURN_IF_ERROR(skip(c, *k, where));
      continue;
    }
    a.at = k->at;
    if (k->field % 2 == 0) {  // a list: kept as "other"
      OMNI_RETURN_IF_ERROR(expect(*k, kLength, where + " field " + std::to_string(k->field) + " (a list value)"));
      OMNI_RETURN_IF_ERROR(sub(c, where + " list value").status());
      a.kind = Attr::Kind::kOther;
      a.value_field = "a list value";
      continue;
    }
    const Scalar& sc = kScalars[(k->field - 3) / 2];
    const std::string field = where + " field '" + sc.name + "'";
    OMNI_RETURN_IF_ERROR(expect(*k, sc.wire, field));
    a.value_field = sc.name;
    if (sc.wire == kLength) {
      auto s = text(c, *k, field);
      if (!s) return s.status();
      a.kind = k->field == 29 ? Attr::Kind::kString : Attr::Kind::kOther;
      a.str = std::move(*s);
      continue;
    }
    auto v = sc.wire == kVarint ? varint(c, field) : fixed(c, sc.wire == kFixed64 ? 8 : 4, field);
    if (!v) return v.status();
    const std::uint64_t u = *v;
    const auto u32 = static_cast<std::uint32_t>(u);
    a.kind = Attr::Kind::kSigned;
    switch (k->field) {
      case 3:
      case 5:
        a.kind = Attr::Kind::kOther;
        break;  // double, float
      case 7:
        a.s = static_cast<std::int32_t>(u32);
        break;
      case 9:
        a.s = static_cast<std::int64_t>(u);
        break;
      case 11:
        a.kind = Attr::Kind::kUnsigned;
        a.u = u32;
        break;
      case 13:
        a.kind = Attr::Kind::kUnsigned;
        a.u = u;
        break;
      case 15:
        a.s = static_cast<std::int32_t>((u32 >> 1) ^ (~(u32 & 1) + 1));
        break;  // zigzag
      case 17:
        a.s = static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
        break;
      case 19:
        a.kind = Attr::Kind::kUnsigned;
        a.u = u32;
        break;
      case 21:
        a.kind = Attr::Kind::kUnsigned;
        a.u = u;
        break;
      case 23:
        a.s = static_cast<std::int32_t>(u32);
        break;
      case 25:
        a.s = static_cast<std::int64_t>(u);
        break;
      default:
        a.kind = Attr::Kind::kUnsigned;
        a.u = u != 0 ? 1 : 0;
        break;  // 27: bool
    }
  }
  return a;
}

// `a`'s value as a whole number >= 0, or an error naming the attribute.
Result<std::uint64_t> unsigned_value(const Attr& a) {
  if (a.kind == Attr::Kind::kUnsigned) return a.u;
  if (a.kind == Attr::Kind::kSigned && a.s >= 0) return static_cast<std::uint64_t>(a.s);
  if (a.kind == Attr::Kind::kSigned) return Status::invalid_argument("is " + std::to_string(a.s) + ", expected >= 0");
  return Status::invalid_argument(std::string("expected an integer value, got ") + a.value_field);
}

Status WireParser::apply(const Attr& a, ChakraNode& n, const std::string& where) const {
  const std::string field = where + " ('" + a.name + "')";
  const auto whole = [&](std::uint64_t max) -> Result<std::uint64_t> {
    auto v = unsigned_value(a);
    if (!v) return fail(a.at, field, v.status().message());
    if (*v > max) return fail(a.at, field, "is " + std::to_string(*v) + ", expected at most " + std::to_string(max));
    return *v;
  };
  constexpr auto kMax64 = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (a.name == "comm_type") {
    auto v = whole(9);
    if (!v) return v.status();
    n.comm_type = static_cast<ChakraCollective>(*v);
  } else if (a.name == "comm_size" || a.name == "num_ops" || a.name == "tensor_size") {
    auto v = whole(std::numeric_limits<std::uint64_t>::max());
    if (!v) return v.status();
    (a.name == "comm_size" ? n.comm_size : a.name == "num_ops" ? n.num_ops : n.tensor_size) = *v;
  } else if (a.name == "comm_src" || a.name == "comm_dst") {
    auto v = whole(kMax64);
    if (!v) return v.status();
    (a.name == "comm_src" ? n.comm_src : n.comm_dst) = static_cast<std::int64_t>(*v);
  } else if (a.name == "comm_tag") {
    if (a.kind == Attr::Kind::kSigned) {
      n.comm_tag = a.s;
    } else {
      auto v = whole(kMax64);
      if (!v) return v.status();
      n.comm_tag = static_cast<std::int64_t>(*v);
    }
  } else if (a.name == "pg_name") {
    if (a.kind != Attr::Kind::kString)
      return fail(a.at, field, std::string("expected string_val, got ") + a.value_field);
    n.pg_name = a.str;
  }
  return Status::ok();
}

Status WireParser::deps(Cursor& c, const Key& k, const std::string& where, std::vector<std::uint64_t>& out) const {
  if (k.wire == kVarint) {  // one unpacked element
    auto v = varint(c, where);
    if (!v) return v.status();
    out.push_back(*v);
    return Status::ok();
  }
  OMNI_RETURN_IF_ERROR(expect(k, kLength, where));
  auto s = sub(c, where);
  if (!s) return s.status();
  while (!s->done()) {  // packed: each element takes at least one byte, so `out` grows with the file only
    auto v = varint(*s, where);
    if (!v) return v.status();
    out.push_back(*v);
  }
  return Status::ok();
}

Result<ChakraNode> WireParser::node(Cursor c, std::size_t index) const {
  const std::string where = "node " + std::to_string(index);
  const auto field = [&](const char* name) { return where + " field '" + name + "'"; };
  ChakraNode n;
  std::vector<Attr> attrs;
  std::size_t type_at = c.pos;
  std::uint64_t type = 0;
  while (!c.done()) {
    auto k = key(c, where);
    if (!k) return k.status();
    switch (k->field) {
      case 1:
      case 3:
      case 6:
      case 7: {
        static constexpr const char* kNames[] = {"", "id", "", "type", "", "", "start_time_micros", "duration_micros"};
        OMNI_RETURN_IF_ERROR(expect(*k, kVarint, field(kNames[k->field])));
        auto v = varint(c, field(kNames[k->field]));
        if (!v) return v.status();
        if (k->field == 1) n.id = *v;
        if (k->field == 3) {
          type = *v;
          type_at = k->at;
        }
        if (k->field == 6) n.start_time_micros = *v;
        if (k->field == 7) n.duration_micros = *v;
        break;
      }
      case 2: {
        auto s = text(c, *k, field("name"));
        if (!s) return s.status();
        n.name = std::move(*s);
        break;
      }
      case 4:
        OMNI_RETURN_IF_ERROR(deps(c, *k, field("ctrl_deps"), n.ctrl_deps));
        break;
      case 5:
        OMNI_RETURN_IF_ERROR(deps(c, *k, field("data_deps"), n.data_deps));
        break;
      case 8:
      case 9:  // inputs, outputs (IOInfo): not used
        OMNI_RETURN_IF_ERROR(expect(*k, kLength, field(k->field == 8 ? "inputs" : "outputs")));
        OMNI_RETURN_IF_ERROR(skip(c, *k, where));
        break;
      case 10: {
        const std::string aw = where + " attr " + std::to_string(attrs.size());
        OMNI_RETURN_IF_ERROR(expect(*k, kLength, field("attr")));
        auto s = sub(c, aw);
        if (!s) return s.status();
        auto a = attribute(*s, aw);
        if (!a) return a.status();
        attrs.push_back(std::move(*a));
        break;
      }
      default:
        OMNI_RETURN_IF_ERROR(skip(c, *k, where));
    }
  }
  if (type > 7) return fail(type_at, field("type"), std::to_string(type) + " is not a NodeType (1..7)");
  n.type = static_cast<ChakraNodeType>(type);
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    OMNI_RETURN_IF_ERROR(apply(attrs[i], n, where + " attr " + std::to_string(i)));
  }
  return n;
}

Status WireParser::check_node(const ChakraNode& n, std::size_t index) const {
  const std::string where = "node " + std::to_string(index) + " (id " + std::to_string(n.id) + ")";
  if (n.type == ChakraNodeType::kInvalid) return fail(n.offset, where + " field 'type'", "INVALID_NODE or absent");
  if (n.type == ChakraNodeType::kSend && !n.comm_dst)
    return fail(n.offset, where + " attr 'comm_dst'", "a COMM_SEND_NODE needs it");
  if (n.type == ChakraNodeType::kRecv && !n.comm_src)
    return fail(n.offset, where + " attr 'comm_src'", "a COMM_RECV_NODE needs it");
  if (n.type == ChakraNodeType::kCollective && !n.comm_type) {
    return fail(n.offset, where + " attr 'comm_type'", "a COMM_COLL_NODE needs it");
  }
  return Status::ok();
}

Status WireParser::check_graph(const ChakraRank& rank) const {
  const std::vector<ChakraNode>& nodes = rank.nodes;
  const auto where = [&](std::size_t i) {
    return "node " + std::to_string(i) + " (id " + std::to_string(nodes[i].id) + ")";
  };
  std::unordered_map<std::uint64_t, std::size_t> by_id;
  by_id.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto [it, fresh] = by_id.emplace(nodes[i].id, i);
    if (!fresh) {
      return fail(nodes[i].offset, where(i) + " field 'id'",
                  "duplicate id: node " + std::to_string(it->second) + " at byte " +
                      std::to_string(nodes[it->second].offset) + " has it too");
    }
  }
  // Kahn's algorithm over dependency -> dependent edges; what is left afterwards lies on or behind a cycle.
  std::vector<std::vector<std::size_t>> deps(nodes.size());
  std::vector<std::size_t> waiting(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> dependents(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const auto* list : {&nodes[i].data_deps, &nodes[i].ctrl_deps}) {
      for (std::uint64_t d : *list) {
        const auto it = by_id.find(d);
        if (it == by_id.end()) {
          return fail(nodes[i].offset,
                      where(i) + (list == &nodes[i].data_deps ? " field 'data_deps'" : " field 'ctrl_deps'"),
                      "no node has id " + std::to_string(d));
        }
        deps[i].push_back(it->second);
      }
    }
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
    waiting[i] = deps[i].size();
    for (std::size_t d : deps[i]) dependents[d].push_back(i);
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (std::size_t j : dependents[i]) {
      if (--waiting[j] == 0) ready.push_back(j);
    }
  }
  if (done == nodes.size()) return Status::ok();
  // Walk back through unfinished dependencies from the first unfinished node until one repeats: it is on a cycle.
  std::size_t at = 0;
  while (waiting[at] == 0) ++at;
  std::vector<std::size_t> seen_step(nodes.size(), 0);
  std::vector<std::size_t> path;
  while (seen_step[at] == 0) {
    path.push_back(at);
    seen_step[at] = path.size();
    for (std::size_t d : deps[at]) {
      if (waiting[d] != 0) {
        at = d;
        break;
      }
    }
  }
  std::string cycle;
  const std::size_t first = seen_step[at] - 1;
  for (std::size_t k = first; k < path.size(); ++k) {
    if (k - first == 8) {
      cycle += "... -> ";
      break;
    }
    cycle += std::to_string(nodes[path[k]].id) + " -> ";
  }
  return fail(nodes[at].offset, where(at) + " fields 'data_deps'/'ctrl_deps'",
              "dependency cycle through ids " + cycle + std::to_string(nodes[at].id) + " (each waits for the next)");
}

Result<ChakraRank> WireParser::parse() {
  if (bytes_.empty()) return fail(0, "GlobalMetadata", "empty file, expected a GlobalMetadata message first");
  Cursor c{0, bytes_.size()};
  ChakraRank rank;
  bool first = true;
  while (!c.done()) {
    const std::size_t at = c.pos;
    const std::string where = first ? std::string("GlobalMetadata") : "node " + std::to_string(rank.nodes.size());
    if (!first && rank.nodes.size() >= limits::kMaxChakraNodes) {
      return fail(at, where, "more than " + std::to_string(limits::kMaxChakraNodes) + " nodes in one file");
    }
    auto m = sub(c, where + " message");
    if (!m) return m.status();
    if (first) {
      auto v = metadata(*m);
      if (!v) return v.status();
      rank.version = std::move(*v);
      first = false;
      continue;
    }
    auto n = node(*m, rank.nodes.size());
    if (!n) return n.status();
    n->offset = at;
    OMNI_RETURN_IF_ERROR(check_node(*n, rank.nodes.size()));
    rank.nodes.push_back(std::move(*n));
  }
  OMNI_RETURN_IF_ERROR(check_graph(rank));
  return rank;
}

// "<prefix>.<rank>.et" split into prefix and rank, or nullopt for another name.
std::optional<std::pair<std::string, std::size_t>> split_rank_name(const std::string& name) {
  constexpr std::string_view kExt = ".et";
  if (name.size() <= kExt.size() || name.compare(name.size() - kExt.size(), kExt.size(), kExt) != 0)
    return std::nullopt;
  const std::string stem = name.substr(0, name.size() - kExt.size());
  const std::size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size() || stem.size() - dot - 1 > 7) return std::nullopt;
  std::size_t rank = 0;
  for (std::size_t i = dot + 1; i < stem.size(); ++i) {
    if (stem[i] < '0' || stem[i] > '9') return std::nullopt;
    rank = rank * 10 + static_cast<std::size_t>(stem[i] - '0');
  }
  return std::make_pair(stem.substr(0, dot), rank);
}

}  // namespace

const char* to_string(ChakraNodeType type) {
  switch (type) {
    case ChakraNodeType::kInvalid:
      return "INVALID_NODE";
    case ChakraNodeType::kMetadata:
      return "METADATA_NODE";
    case ChakraNodeType::kMemLoad:
      return "MEM_LOAD_NODE";
    case ChakraNodeType::kMemStore:
      return "MEM_STORE_NODE";
    case ChakraNodeType::kCompute:
      return "COMP_NODE";
    case ChakraNodeType::kSend:
      return "COMM_SEND_NODE";
    case ChakraNodeType::kRecv:
      return "COMM_RECV_NODE";
    case ChakraNodeType::kCollective:
      return "COMM_COLL_NODE";
  }
  return "?";
}

const char* to_string(ChakraCollective kind) {
  switch (kind) {
    case ChakraCollective::kAllReduce:
      return "ALL_REDUCE";
    case ChakraCollective::kReduce:
      return "REDUCE";
    case ChakraCollective::kAllGather:
      return "ALL_GATHER";
    case ChakraCollective::kGather:
      return "GATHER";
    case ChakraCollective::kScatter:
      return "SCATTER";
    case ChakraCollective::kBroadcast:
      return "BROADCAST";
    case ChakraCollective::kAllToAll:
      return "ALL_TO_ALL";
    case ChakraCollective::kReduceScatter:
      return "REDUCE_SCATTER";
    case ChakraCollective::kReduceScatterBlock:
      return "REDUCE_SCATTER_BLOCK";
    case ChakraCollective::kBarrier:
      return "BARRIER";
  }
  return "?";
}

Result<ChakraRank> parse_chakra_rank(std::string_view bytes, std::string_view source) {
  return WireParser(bytes, source).parse();
}

Result<ChakraRank> read_chakra_rank(const std::string& path) {
  auto bytes = read_text_file(path);
  if (!bytes) return bytes.status();
  return parse_chakra_rank(*bytes, path);
}

std::string chakra_rank_path(const std::string& prefix, std::size_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

Result<std::vector<ChakraRank>> read_chakra_trace(const std::string& prefix_or_folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path given(prefix_or_folder);
  const bool folder = fs::is_directory(given, ec);
  fs::path dir = folder ? given : given.parent_path();
  std::optional<std::string> prefix;  // a folder's prefix is the one its files share
  if (!folder) {
    prefix = given.filename().string();
    if (const auto r = split_rank_name(*prefix); r && fs::is_regular_file(given, ec)) prefix = r->first;  // "x.0.et"
  }
  if (dir.empty()) dir = ".";
  std::map<std::string, std::map<std::size_t, std::string>> found;  // prefix -> rank -> path
  std::size_t files = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto r = split_rank_name(it->path().filename().string());
    if (!r || (prefix && r->first != *prefix)) continue;
    if (++files > limits::kMaxWorkers) {
      return Status::invalid_argument(prefix_or_folder + ": more than " + std::to_string(limits::kMaxWorkers) +
                                      " rank files");
    }
    found[r->first][r->second] = it->path().string();
  }
  if (ec) return Status::io_error(dir.string() + ": cannot list the folder: " + ec.message());
  if (found.empty()) {
    return Status::not_found(prefix_or_folder + ": no Chakra trace files (" +
                             (folder ? "<prefix>.<rank>.et in the folder" : chakra_rank_path(prefix_or_folder, 0)) +
                             ")");
  }
  if (found.size() > 1) {
    std::string names;
    for (const auto& [p, ranks] : found) names += (names.empty() ? "'" : ", '") + p + "'";
    return Status::invalid_argument(prefix_or_folder + ": files of several traces (prefixes " + names +
                                    "); name one by its prefix");
  }
  const auto& [name, paths] = *found.begin();
  std::vector<ChakraRank> ranks;
  for (const auto& [rank, path] : paths) {
    if (rank != ranks.size()) {
      return Status::not_found(prefix_or_folder + ": rank " + std::to_string(ranks.size()) + "'s file " +
                               chakra_rank_path((dir / name).string(), ranks.size()) + " is missing (ranks up to " +
                               std::to_string(paths.rbegin()->first) + " are present)");
    }
    auto r = read_chakra_rank(path);
    if (!r) return r.status();
    ranks.push_back(std::move(*r));
  }
  return ranks;
}

}  // namespace omnilearn::traces
