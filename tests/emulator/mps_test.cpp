// CUDA MPS shares (label emulator-gpu): a private MpsDaemon, two gpu_burn clients at 25% and 75% active-thread
// percentage running the same window concurrently; the 75% client must get at least twice the throughput, and no
// daemon process may be left afterwards. Skips with the reason on machines without a GPU, MPS or gpu_burn.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/mps_daemon.h"

extern char** environ;

namespace omnilearn::emulator {
namespace {

#ifdef OMNILEARN_GPU_BURN
constexpr const char* kGpuBurn = OMNILEARN_GPU_BURN;
#else
constexpr const char* kGpuBurn = "";
#endif

// Runs `argv` (argv[0] looked up in PATH) with this process's environment plus `extra_env`, returning its exit code
// and its output (stdout and stderr).
std::pair<int, std::string> capture(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {}) {
  SpawnOptions options;
  options.search_path = true;
  options.pipe_output = true;
  options.env = extra_env;
  for (char** e = environ; *e != nullptr; ++e) options.env->emplace_back(*e);
  auto child = Subprocess::start(argv, options);
  if (!child) return {-1, child.status().message()};
  std::string out = child->read_all();
  child->wait();
  return {WIFEXITED(child->status()) ? WEXITSTATUS(child->status()) : -1, out};
}

// Alive and not a zombie (a daemon reparented to a container's init that does not reap stays a zombie).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

TEST(MpsDaemon, SharesScaleThroughputAndTheDaemonIsGoneAfterwards) {
  if (std::string(kGpuBurn).empty() || !std::filesystem::exists(kGpuBurn)) {
    GTEST_SKIP() << "gpu_burn was not built (no CUDA compiler at configure time)";
  }
  const auto [smi_rc, smi] = capture({"nvidia-smi", "-L"});
  if (smi_rc != 0) GTEST_SKIP() << "nvidia-smi does not work here (no GPU or driver): " << smi;
  if (find_program("nvidia-cuda-mps-control").empty()) GTEST_SKIP() << "nvidia-cuda-mps-control not installed";
  std::printf("%s", smi.c_str());

  const std::string base = "/tmp/omnilearn-mps-test-" + std::to_string(::getpid());
  std::filesystem::remove_all(base);
  std::vector<pid_t> daemon_pids;
  double low = 0.0, high = 0.0;
  {
    MpsDaemonOptions options;
    options.base_dir = base;
    auto daemon = MpsDaemon::start(options);
    ASSERT_TRUE(daemon.is_ok()) << daemon.status().message();
    daemon_pids = (*daemon)->processes();
    EXPECT_FALSE(daemon_pids.empty());
    const double start_at =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() + 4.0;
    auto client = [&](int pct, std::string& out) {
      out = capture({kGpuBurn, "--seconds", "4", "--start-at", std::to_string(start_at)}, (*daemon)->client_env(pct)).second;
    };
    std::string out25, out75;
    std::thread a(client, 25, std::ref(out25));
    std::thread b(client, 75, std::ref(out75));
    a.join();
    b.join();
    std::printf("25%%: %s75%%: %s", out25.c_str(), out75.c_str());
    try {
      const auto j25 = nlohmann::json::parse(out25.substr(out25.rfind('{')));
      const auto j75 = nlohmann::json::parse(out75.substr(out75.rfind('{')));
      ASSERT_FALSE(j25.contains("error")) << out25;
      ASSERT_FALSE(j75.contains("error")) << out75;
      low = j25["gfma_per_s"].get<double>();
      high = j75["gfma_per_s"].get<double>();
    } catch (const std::exception& e) {
      FAIL() << "gpu_burn output is not JSON: " << e.what() << "\n25%: " << out25 << "\n75%: " << out75;
    }
    const Status stopped = (*daemon)->stop();
    EXPECT_TRUE(stopped.is_ok()) << stopped.message();
    EXPECT_FALSE((*daemon)->running());
  }
  std::printf("throughput 75%% / 25%% = %.2f (%.1f / %.1f GFMA/s)\n", high / low, high, low);
  EXPECT_GE(high / low, 2.0);
  for (pid_t pid : daemon_pids) EXPECT_FALSE(alive(pid)) << "MPS process " << pid << " is still alive";
  std::filesystem::remove_all(base);
}

TEST(MpsDaemon, MissingControlProgramIsAClearError) {
  MpsDaemonOptions o;
  o.base_dir = "/tmp/omnilearn-mps-missing-" + std::to_string(::getpid());
  o.control_program = "/nonexistent/nvidia-cuda-mps-control";
  auto d = MpsDaemon::start(o);
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("nvidia-cuda-mps-control"), std::string::npos) << d.status().message();
}

}  // namespace
}  // namespace omnilearn::emulator
