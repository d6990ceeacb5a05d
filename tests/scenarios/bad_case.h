// Table-driven refusal tests of the scenario parser: a scenario text edited in one place, `--set` overrides, and the
// substrings the error message must hold. Header-only test support.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "omnilearn/scenarios/scenario_parser.h"

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

// Parses `c` as the file `path` and expects a refusal whose message holds every expected part.
inline void expect_refused(const BadCase& c, const std::string& path) {
  SCOPED_TRACE(c.label);
  auto r = parse_scenario(c.yaml, path, c.overrides);
  ASSERT_FALSE(r.is_ok());
  for (const std::string& part : c.expected) {
    EXPECT_NE(r.status().message().find(part), std::string::npos)
        << "message: " << r.status().message() << "\nexpected to contain: " << part;
  }
}

}  // namespace omnilearn::scenarios::testing
