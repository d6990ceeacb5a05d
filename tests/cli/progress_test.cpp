// The sweep's progress text: durations, the time-left estimate, and when a plain line is due (one per finished
// point for small sweeps; at most one per 1% of the points or per 10 s for large ones).
#include <gtest/gtest.h>

#include "cli/progress_bar.h"

namespace omnilearn::cli {
namespace {

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(0.2), "0s");
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(72), "1m12s");
  EXPECT_EQ(format_duration(3600 + 180 + 59), "1h03m");
  EXPECT_EQ(format_duration(-3), "0s");
}

TEST(Progress, ElapsedAndTimeLeft) {
  EXPECT_EQ(elapsed_and_eta(0.0, 3), "elapsed 3s");
  EXPECT_EQ(elapsed_and_eta(5.0 / 16.0, 72), "elapsed 1m12s, eta 2m38s");  // 72 s * 11/5 = 158.4 s
  EXPECT_EQ(elapsed_and_eta(1.0, 230), "elapsed 3m50s");                   // done: no estimate
}

TEST(Progress, PlainLinesAreRateLimitedForLargeSweeps) {
  // 16 points: every finished point is more than 1%, so each gets its line.
  for (std::size_t done = 1; done <= 16; ++done) EXPECT_TRUE(plain_line_due(done, 16, done - 1, 0.0)) << done;
  // 100,000 points finishing fast: a line per 1,000 points, or after 10 s, and always the last one.
  EXPECT_FALSE(plain_line_due(500, 100000, 0, 1.0));
  EXPECT_TRUE(plain_line_due(1000, 100000, 0, 1.0));
  EXPECT_FALSE(plain_line_due(1001, 100000, 1000, 9.9));
  EXPECT_TRUE(plain_line_due(1001, 100000, 1000, 10.0));
  EXPECT_TRUE(plain_line_due(100000, 100000, 99999, 0.0));
  int lines = 0;
  std::size_t last = 0;
  for (std::size_t done = 1; done <= 100000; ++done) {
    if (plain_line_due(done, 100000, last, 0.0)) ++lines, last = done;
  }
  EXPECT_EQ(lines, 100);
}

}  // namespace
}  // namespace omnilearn::cli
