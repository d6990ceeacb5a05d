#include "omnilearn/traces/availability_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace omnilearn::traces {
namespace {

TEST(AvailabilityTraceTest, NormalisesMissingStartAndRepeats) {
  auto t = AvailabilityTrace::create({{"a", {{5.0, 0.5}, {7.0, 0.5}, {9.0, 0.0}}}, {"b", {{0.0, 0.25}}}});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const std::vector<TracePoint> want{{0.0, 1.0}, {5.0, 0.5}, {9.0, 0.0}};
  EXPECT_EQ(t->changes(0), want);
  EXPECT_EQ(t->duration(), 9.0);
  EXPECT_EQ(t->find_worker("b"), WorkerId{1});
  EXPECT_FALSE(t->find_worker("c").has_value());
  EXPECT_EQ(t->worker_name(1), "b");
}

TEST(AvailabilityTraceTest, FractionAtHoldsAndLoops) {
  auto held = AvailabilityTrace::create({{"a", {{0.0, 1.0}, {10.0, 0.5}}}}, 20.0);
  ASSERT_TRUE(held.is_ok());
  EXPECT_EQ(held->fraction_at(0, -1.0), 1.0);
  EXPECT_EQ(held->fraction_at(0, 9.999), 1.0);
  EXPECT_EQ(held->fraction_at(0, 10.0), 0.5);
  EXPECT_EQ(held->fraction_at(0, 1000.0), 0.5);

  auto looped = AvailabilityTrace::create({{"a", {{0.0, 1.0}, {10.0, 0.5}}}}, std::nullopt, 20.0);
  ASSERT_TRUE(looped.is_ok());
  EXPECT_EQ(looped->duration(), 20.0);
  EXPECT_EQ(looped->fraction_at(0, 25.0), 1.0);
  EXPECT_EQ(looped->fraction_at(0, 35.0), 0.5);
  const std::vector<Seconds> want{5.0, 10.0, 20.0, 30.0};
  EXPECT_EQ(looped->change_times_in(0, 5.0, 40.0), want);
}

struct BadCase {
  const char* what;
  std::vector<WorkerSeries> workers;
  std::optional<Seconds> duration;
  std::optional<Seconds> loop;
  const char* message_part;
};

TEST(AvailabilityTraceTest, RejectsInvalidInput) {
  const std::vector<BadCase> cases{
      {"no workers", {}, {}, {}, "no workers"},
      {"empty name", {{"", {}}}, {}, {}, "empty"},
      {"name starting with #", {{"#a", {}}}, {}, {}, "not usable"},
      {"name with surrounding space", {{" a", {}}}, {}, {}, "not usable"},
      {"duplicate", {{"a", {}}, {"a", {}}}, {}, {}, "twice"},
      {"fraction > 1", {{"a", {{0.0, 1.5}}}}, {}, {}, "outside [0,1]"},
      {"negative fraction", {{"a", {{0.0, -0.1}}}}, {}, {}, "outside [0,1]"},
      {"negative time", {{"a", {{-1.0, 0.5}}}}, {}, {}, "finite time >= 0"},
      {"unsorted", {{"a", {{2.0, 0.5}, {1.0, 0.2}}}}, {}, {}, "strictly increasing"},
      {"duration too short", {{"a", {{5.0, 0.5}}}}, 4.0, {}, "duration_s"},
      {"loop too short", {{"a", {{5.0, 0.5}}}}, {}, 5.0, "loop_after_s"},
  };
  for (const BadCase& c : cases) {
    auto t = AvailabilityTrace::create(c.workers, c.duration, c.loop);
    ASSERT_FALSE(t.is_ok()) << c.what;
    EXPECT_NE(t.status().message().find(c.message_part), std::string::npos) << c.what << ": " << t.status().message();
  }
}

}  // namespace
}  // namespace omnilearn::traces
