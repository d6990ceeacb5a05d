// One table per enum (enum_names.h): every value has a distinct name, and the JSON writes and reads that name (the
// parser reads it through the same table: scenario_parser_test).
#include "omnilearn/scenarios/enum_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "omnilearn/scenarios/scenario_json.h"

namespace omnilearn::scenarios {
namespace {

template <typename E>
void expect_round_trips(std::size_t values) {
  const auto names = enum_names(E{});
  EXPECT_EQ(names.size(), values);
  std::set<std::string_view> seen;
  for (const EnumName<E>& n : names) {
    EXPECT_TRUE(seen.insert(n.name).second) << "two values are spelled \"" << n.name << "\"";
    EXPECT_EQ(enum_name(n.value), n.name);
    EXPECT_EQ(enum_from_name<E>(n.name), n.value);
    const nlohmann::json j = n.value;
    EXPECT_EQ(j, std::string(n.name));
    EXPECT_EQ(j.get<E>(), n.value);
  }
  EXPECT_FALSE(enum_from_name<E>("no-such-name").has_value());
}

TEST(EnumNames, EveryTestbedEnumRoundTrips) {
  expect_round_trips<Network>(4);
  expect_round_trips<Loss>(2);
  expect_round_trips<Device>(2);
  expect_round_trips<LrScalingRule>(2);
  expect_round_trips<QuotaScope>(2);
  expect_round_trips<AspUpdate>(2);
  expect_round_trips<AspPull>(2);
  expect_round_trips<AspRule>(7);
}

}  // namespace
}  // namespace omnilearn::scenarios
