// This host's RAPL counters, read for real: skipped, with the reason printed, where the host exposes none (no
// /sys/class/powercap, a virtual machine, energy_uj readable by root only). Label emulator-rapl.
#include <unistd.h>

#include <gtest/gtest.h>

#include "omnilearn/emulator/energy_counter.h"

namespace omnilearn::emulator {
namespace {

TEST(RaplOnThisHost, CountsWhileTheHostWorks) {
  auto counter = open_host_energy_counter();
  if (!counter) GTEST_SKIP() << "no energy counters on this host: " << counter.status().message();
  auto before = (*counter)->joules();
  ASSERT_TRUE(before.is_ok()) << before.status().message();
  ::usleep(200000);
  auto after = (*counter)->joules();
  ASSERT_TRUE(after.is_ok()) << after.status().message();
  // A powered package draws something: over 0.2 s more than 0 J, and less than a 2 kW host could.
  EXPECT_GT(*after - *before, 0.0) << (*counter)->description();
  EXPECT_LT(*after - *before, 400.0) << (*counter)->description();
}

}  // namespace
}  // namespace omnilearn::emulator
