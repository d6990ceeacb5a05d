// RAPL through a fake powercap tree in a temporary folder (so it runs on every host): package zones only, the
// counter's wrap-around, several packages, and unreadable files reported by name.
#include "omnilearn/emulator/energy_counter.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fake_powercap.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

TEST(WrappedDelta, CountsUpAndAcrossOneWrap) {
  EXPECT_EQ(wrapped_delta(100, 250, 1000), 150u);
  EXPECT_EQ(wrapped_delta(900, 50, 1000), 150u);  // 100 to the wrap, then 50
  EXPECT_EQ(wrapped_delta(7, 7, 1000), 0u);
}

TEST(Rapl, SumsThePackagesOnlyAndFollowsAWrap) {
  FakePowercap p("packages");
  p.zone("intel-rapl:0", "package-0", 1'000'000, 990'000);
  p.zone("intel-rapl:1", "package-1", 1'000'000, 10'000);
  p.zone("intel-rapl:0:0", "core", 1'000'000, 5);  // part of package 0: not counted again
  p.zone("intel-rapl:2", "psys", 1'000'000, 0);    // overlaps the packages: not counted
  auto counter = open_rapl(p.root());
  ASSERT_TRUE(counter.is_ok()) << counter.status().message();
  EXPECT_EQ((*counter)->description(), "RAPL package-0, package-1");
  auto zero = (*counter)->joules();
  ASSERT_TRUE(zero.is_ok());
  EXPECT_DOUBLE_EQ(*zero, 0.0);
  p.set("intel-rapl:0", 20'000);   // wrapped: 10 000 to the range, then 20 000 -> 0.03 J
  p.set("intel-rapl:1", 510'000);  // 0.5 J
  p.set("intel-rapl:0:0", 999'999);
  p.set("intel-rapl:2", 999'999);
  auto j = (*counter)->joules();
  ASSERT_TRUE(j.is_ok()) << j.status().message();
  EXPECT_NEAR(*j, 0.53, 1e-12);
  p.set("intel-rapl:0", 1'020'000 - 1'000'000 + 70'000);  // +0.07 J
  auto j2 = (*counter)->joules();
  ASSERT_TRUE(j2.is_ok());
  EXPECT_NEAR(*j2, 0.60, 1e-12);  // joules since opened, accumulated
}

TEST(Rapl, NoTreeOrNoPackageSaysWhy) {
  auto absent = open_rapl("/nonexistent/omnilearn/powercap");
  ASSERT_FALSE(absent.is_ok());
  EXPECT_NE(absent.status().message().find("/nonexistent/omnilearn/powercap is absent"), std::string::npos);
  FakePowercap p("none");
  p.zone("intel-rapl:0:0", "core", 1000, 1);
  auto none = open_rapl(p.root());
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("no RAPL package zone"), std::string::npos) << none.status().message();
}

TEST(Rapl, AnUnreadableCounterIsNamed) {
  FakePowercap p("unreadable");
  p.zone("intel-rapl:0", "package-0", 1000, 1);
  // Not a number (as a counter the kernel hides would be for a reader without the right).
  std::ofstream(p.root() / "intel-rapl:0" / "energy_uj") << "permission denied\n";
  auto bad = open_rapl(p.root());
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("intel-rapl:0/energy_uj"), std::string::npos) << bad.status().message();
  // A folder where the file should be: unreadable whoever reads it (root included).
  fs::remove(p.root() / "intel-rapl:0" / "max_energy_range_uj");
  fs::create_directories(p.root() / "intel-rapl:0" / "max_energy_range_uj");
  auto dir = open_rapl(p.root());
  ASSERT_FALSE(dir.is_ok());
  EXPECT_NE(dir.status().message().find("cannot read " + (p.root() / "intel-rapl:0" / "max_energy_range_uj").string()),
            std::string::npos)
      << dir.status().message();
}

TEST(Rapl, AReadThatFailsLaterIsAnError) {
  FakePowercap p("later");
  p.zone("intel-rapl:0", "package-0", 1000, 1);
  auto counter = open_rapl(p.root());
  ASSERT_TRUE(counter.is_ok());
  fs::remove(p.root() / "intel-rapl:0" / "energy_uj");
  auto j = (*counter)->joules();
  ASSERT_FALSE(j.is_ok());
  EXPECT_NE(j.status().message().find("energy_uj"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::emulator
