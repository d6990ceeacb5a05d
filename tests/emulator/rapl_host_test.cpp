// This host's RAPL counters, read for real, and the host power calibration through them (host_power.h): skipped, with
// the reason printed, where the host exposes none (no /sys/class/powercap, a virtual machine, energy_uj readable by
// root only). Label emulator-rapl.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>

#include "omnilearn/emulator/energy_counter.h"
#include "omnilearn/emulator/host_power.h"

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

TEST(RaplOnThisHost, BusyCoresDrawMoreThanAnIdleHost) {
  auto counter = open_host_energy_counter();
  if (!counter) GTEST_SKIP() << "no energy counters on this host: " << counter.status().message();
  HostPowerRun run;
  run.idle_s = run.busy_s = 2.0;
  auto power = measure_host_power(**counter, "this-host", run);
  ASSERT_TRUE(power.is_ok()) << power.status().message();
  std::printf("%s: %.2f W idle, %.2f W with %d cores busy\n", power->counter.c_str(), power->idle_w, power->busy_w,
              power->cores);
  EXPECT_GT(power->idle_w, 0.0);
  EXPECT_GT(power->busy_w, power->idle_w);
}

}  // namespace
}  // namespace omnilearn::emulator
