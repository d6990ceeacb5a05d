// This host's GPUs' NVML energy counters, read for real through the driver's libnvidia-ml: skipped, with the reason
// printed, where there is none (no NVIDIA driver, no GPU, a GPU without the counter). Label emulator-gpu.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>

#include "omnilearn/emulator/energy_counter.h"

namespace omnilearn::emulator {
namespace {

TEST(NvmlOnThisHost, CountsWhileTheGpusArePowered) {
  auto counter = open_nvml();
  if (!counter) GTEST_SKIP() << "no NVML energy counters on this host: " << counter.status().message();
  std::printf("counting %s\n", (*counter)->description().c_str());
  auto before = (*counter)->joules();
  ASSERT_TRUE(before.is_ok()) << before.status().message();
  ::usleep(500000);
  auto after = (*counter)->joules();
  ASSERT_TRUE(after.is_ok()) << after.status().message();
  // A powered GPU draws tens of watts idle: over 0.5 s more than 0 J (the counter's resolution is 1 mJ, its update
  // period tens of ms), and less than 2 kW a GPU could.
  EXPECT_GT(*after - *before, 0.0) << (*counter)->description();
  EXPECT_LT(*after - *before, 1000.0 * 16) << (*counter)->description();
}

}  // namespace
}  // namespace omnilearn::emulator
