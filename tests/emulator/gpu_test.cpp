// The GPU path (--device cuda): MPS percentages, the worker program's CUDA probe (run everywhere: on a CPU-only
// LibTorch it must say why), and a real CUDA training run under MPS shares with a duty-cycled availability change
// (needs a GPU, a CUDA LibTorch and cgroups; skipped with the reason otherwise; CTest label emulator-gpu).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "launch/gpu_launch.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/emulator/mps_daemon.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

TEST(GpuEmulation, MpsPercentagesSplitTheGpuByShare) {
  const std::vector<int> hl8 = detail::mps_percentages({6, 6, 4, 32});
  EXPECT_EQ(hl8, (std::vector<int>{13, 13, 8, 67}));
  EXPECT_EQ(detail::mps_percentages({1, 1}), (std::vector<int>{50, 50}));
  EXPECT_EQ(detail::mps_percentages({0.001, 10})[0], 1);  // never 0: an MPS client needs some threads
}

#ifdef OMNILEARN_WORKER
TEST(GpuEmulation, CudaProbeSaysWhetherAndWhy) {
  const Status probe = detail::probe_cuda(OMNILEARN_WORKER);
  if (probe.is_ok()) {
    std::printf("this worker program can train on CUDA here\n");
    return;
  }
  // A CPU-only LibTorch (Debian's) or no GPU: the reason names the check and the way out.
  EXPECT_NE(probe.message().find("torch::cuda::is_available() is false"), std::string::npos) << probe.message();
  EXPECT_NE(probe.message().find("Torch_DIR"), std::string::npos) << probe.message();
  std::printf("CUDA refused, as expected on this machine: %s\n", probe.message().c_str());
}

// Two workers at 2:1 GPU shares for 2 epochs of 1024 samples; worker 1 runs at 0.5 availability (freezer duty
// cycle) in the second epoch. The MPS daemon and the cgroups are gone afterwards.
TEST(GpuEmulation, CudaTrainingRunUnderMpsShares) {
  if (const Status probe = detail::probe_cuda(OMNILEARN_WORKER); !probe.is_ok()) {
    GTEST_SKIP() << "no CUDA training here: " << probe.message();
  }
  if (const Status access = check_cgroup_access(); !access.is_ok()) GTEST_SKIP() << "no cgroups: " << access.message();
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  const std::string dir = testing::fresh_dir("gpu");
  auto scenario = scenarios::load_scenario(testing::write_scenario(
      dir, "gpu", 2, "availability:\n  schedule:\n    unit: epochs\n    phases:\n      - {at: 0, fractions: [1, 1]}\n"
                     "      - {at: 1, fractions: [1, 0.5]}\n"));
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  scenarios::EmulatorSpec config;
  config.device = Device::kCuda;
  config.eval_samples = 500;
  config.target_accuracy = 0.0;
  LaunchOptions o;
  o.output_dir = dir + "/run";
  o.environment = std::make_shared<HostLaunchEnvironment>(OMNILEARN_WORKER);
  o.argv = {"gpu_test"};
  auto r = run_emulation(with_settings(*scenario, config), o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->summary.iterations, 32);
  std::ifstream manifest(dir + "/run/manifest.json");
  std::string text((std::istreambuf_iterator<char>(manifest)), {});
  EXPECT_NE(text.find("device=cuda"), std::string::npos);
  for (const auto& e : fs::directory_iterator("/tmp")) {
    const std::string name = e.path().filename().string();
    if (name.find("-mps") == std::string::npos || name.find("gpu") == std::string::npos) continue;
    EXPECT_TRUE(fs::is_empty(e.path() / "pipe") || !fs::exists(e.path() / "pipe")) << "MPS pipe left in " << e.path();
  }
}
#endif

}  // namespace
}  // namespace omnilearn::emulator
