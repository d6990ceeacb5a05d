#include "protobuf_wire.h"

namespace omnilearn::traces::detail {

const char* wire_name(int wire) {
  switch (wire) {
    case kVarint:
      return "varint";
    case kFixed64:
      return "64-bit";
    case kLength:
      return "length-delimited";
    case kFixed32:
      return "32-bit";
    default:
      return "invalid";
  }
}

Result<std::uint64_t> WireReader::varint(Cursor& c, const std::string& where) const {
  const std::size_t start = c.pos;
  std::uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (c.pos >= c.end) return fail(start, where, "truncated varint");
    const auto b = static_cast<std::uint8_t>(bytes_[c.pos++]);
    if (i == 9 && b > 1) return fail(start, where, "varint longer than 64 bits");
    v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  return fail(start, where, "varint longer than 10 bytes");
}

Result<std::uint64_t> WireReader::fixed(Cursor& c, int width, const std::string& where) const {
  if (c.end - c.pos < static_cast<std::size_t>(width)) {
    return fail(c.pos, where, "truncated " + std::to_string(8 * width) + "-bit value");
  }
  std::uint64_t v = 0;
  for (int i = 0; i < width; ++i)
    v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes_[c.pos++])) << (8 * i);
  return v;
}

Result<Cursor> WireReader::sub(Cursor& c, const std::string& where) const {
  const std::size_t start = c.pos;
  auto len = varint(c, where + " length");
  if (!len) return len.status();
  if (*len > c.end - c.pos) {
    return fail(
        start, where,
        "length " + std::to_string(*len) + " runs past the end (" + std::to_string(c.end - c.pos) + " bytes left)");
  }
  Cursor out{c.pos, c.pos + static_cast<std::size_t>(*len)};
  c.pos = out.end;
  return out;
}

Result<Key> WireReader::key(Cursor& c, const std::string& where) const {
  const std::size_t at = c.pos;
  auto v = varint(c, where + " field key");
  if (!v) return v.status();
  Key k{*v >> 3, static_cast<int>(*v & 7), at};
  if (k.field == 0 || k.field > (1u << 29) - 1)
    return fail(at, where, "field number " + std::to_string(k.field) + " is not valid");
  if (k.wire == kGroupStart || k.wire == kGroupEnd) {
    return fail(at, where, "field " + std::to_string(k.field) + " uses the deprecated group wire type");
  }
  if (k.wire > kFixed32)
    return fail(at, where, "field " + std::to_string(k.field) + " has invalid wire type " + std::to_string(k.wire));
  return k;
}

Status WireReader::skip(Cursor& c, const Key& k, const std::string& where) const {
  const std::string field = where + " field " + std::to_string(k.field);
  switch (k.wire) {
    case kVarint:
      return varint(c, field).status();
    case kFixed64:
      return fixed(c, 8, field).status();
    case kFixed32:
      return fixed(c, 4, field).status();
    default:
      return sub(c, field).status();
  }
}

Status WireReader::expect(const Key& k, int wire, const std::string& where) const {
  if (k.wire == wire) return Status::ok();
  return fail(k.at, where,
              std::string("wire type ") + wire_name(k.wire) + " (" + std::to_string(k.wire) + "), expected " +
                  wire_name(wire) + " (" + std::to_string(wire) + ")");
}

Result<std::string> WireReader::text(Cursor& c, const Key& k, const std::string& where) const {
  OMNI_RETURN_IF_ERROR(expect(k, kLength, where));
  auto s = sub(c, where);
  if (!s) return s.status();
  return std::string(bytes_.substr(s->pos, s->end - s->pos));
}

}  // namespace omnilearn::traces::detail
