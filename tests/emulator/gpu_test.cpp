// The GPU path (--device cuda: CUDA MPS + freezer duty cycle) needs a CUDA-enabled LibTorch and a GPU.
#include <gtest/gtest.h>

#include <filesystem>

#include "omnilearn/emulator/emulator_config.h"

namespace omnilearn::emulator {
namespace {

TEST(GpuEmulation, CudaDeviceIsRefusedWithAReasonOnThisBuild) {
  if (std::filesystem::exists("/dev/nvidia0") && std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "a GPU is present: the MPS share check is emulator_mps_test; the CUDA training worker is not built";
  }
  EmulatorConfig c;
  ASSERT_TRUE(apply_setting(c, "device=cuda").is_ok());
  scenarios::Scenario s;
  s.workload.dataset = "fashion-mnist";
  s.cluster.workers.resize(1);
  const Status st = validate_for_testbed(s, c, 2);
  EXPECT_FALSE(st.is_ok());
  GTEST_SKIP() << "no GPU and no CUDA LibTorch on this machine: " << st.message();
}

}  // namespace
}  // namespace omnilearn::emulator
