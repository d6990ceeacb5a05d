// WireReader: a protobuf wire-format reader over one file held in memory (varints, 64- and 32-bit values,
// length-delimited fields, unknown fields skipped), for readers of protobuf files without a protobuf library
// (chakra_trace.cpp). Errors read "source: byte N: where: what". Immutable: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "omnilearn/base/status.h"

namespace omnilearn::traces::detail {

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
enum Wire : int { kVarint = 0, kFixed64 = 1, kLength = 2, kGroupStart = 3, kGroupEnd = 4, kFixed32 = 5 };

// "varint", "64-bit", "length-delimited", "32-bit" or "invalid".
const char* wire_name(int wire);

// A window [pos, end) of the file; offsets are the file's.
struct Cursor {
  std::size_t pos = 0;
  std::size_t end = 0;
  bool done() const { return pos >= end; }
};

struct Key {
  std::uint64_t field = 0;
  int wire = 0;
  std::size_t at = 0;  // the key's offset
};

class WireReader {
 public:
  // `bytes` must outlive the reader; `source` names it in errors.
  WireReader(std::string_view bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  Status fail(std::size_t at, const std::string& where, const std::string& what) const {
    return Status::parse_error(std::string(source_) + ": byte " + std::to_string(at) + ": " + where + ": " + what);
  }

  // Each reads at c.pos, never past c.end, and moves c.pos past what it read; `where` names the field in errors.
  Result<std::uint64_t> varint(Cursor& c, const std::string& where) const;
  Result<std::uint64_t> fixed(Cursor& c, int width, const std::string& where) const;  // width 4 or 8, little-endian
  Result<Cursor> sub(Cursor& c, const std::string& where) const;  // a length-delimited field's window
  Result<Key> key(Cursor& c, const std::string& where) const;     // refuses field 0, groups, wire types 6 and 7
  Status skip(Cursor& c, const Key& k, const std::string& where) const;
  Status expect(const Key& k, int wire, const std::string& where) const;  // the wire type a known field has
  Result<std::string> text(Cursor& c, const Key& k, const std::string& where) const;

 protected:
  std::string_view bytes_;
  std::string_view source_;
};

}  // namespace omnilearn::traces::detail
