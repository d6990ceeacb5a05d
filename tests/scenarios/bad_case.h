// Table-driven refusal tests of the scenario parser: a scenario text edited in one place, `--set` overrides, and the
// substrings the error message must hold. Header-only test support.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace omnilearn::scenarios::testing {

struct BadCase {
  const char* label;
  std::string yaml;
  std::vector<std::string> overrides;
  std::vector<std::string> expected;  // substrings of the message
};

// `text` with the first `from` replaced by `to`; a `from` that is not there fails the calling test.
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace omnilearn::scenarios::testing
