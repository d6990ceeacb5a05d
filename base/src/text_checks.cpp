#include "omnilearn/base/text_checks.h"

namespace omnilearn {

std::size_t invalid_utf8_offset(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80;  // the second byte's range excludes overlongs and surrogates
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::size_t control_char_offset(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) return i;
  }
  return std::string_view::npos;
}

std::string name_problem(std::string_view name, std::size_t max_bytes) {
  if (name.empty()) return "a non-empty name";
  if (name.size() > max_bytes) {
    return "a name of at most " + std::to_string(max_bytes) + " bytes, got " + std::to_string(name.size());
  }
  if (!is_valid_utf8(name)) return "a name in UTF-8";
  if (control_char_offset(name) != std::string_view::npos) return "a name without control characters";
  if (name.find_first_of("/\\") != std::string_view::npos) return "a name without '/' or '\\'";
  if (name == "." || name == "..") return "a name other than '.' or '..'";
  return "";
}

}  // namespace omnilearn
