// Checks on text that comes from input files and becomes JSON, a file name or script text. Pure functions:
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace omnilearn {

// The offset of the first byte that is not part of well-formed UTF-8 (no overlongs, no surrogates, nothing
// above U+10FFFF), or npos when all of `text` is well-formed.
std::size_t invalid_utf8_offset(std::string_view text);
inline bool is_valid_utf8(std::string_view text) { return invalid_utf8_offset(text) == std::string_view::npos; }

// The offset of the first ASCII control character (0x00-0x1F or 0x7F), or npos.
std::size_t control_char_offset(std::string_view text);

// Why `name` cannot name a file, folder or cgroup, or "" if it can: non-empty, at most `max_bytes` bytes,
// well-formed UTF-8, no control character, no '/' or '\\', and not "." or "..".
std::string name_problem(std::string_view name, std::size_t max_bytes);

}  // namespace omnilearn
