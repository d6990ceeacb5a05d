// The real cgroup throttler. Needs write access to the cgroup tree; skipped with the reason otherwise.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "omnilearn/emulator/names.h"
#include "omnilearn/emulator/resource_throttler.h"

namespace omnilearn::emulator {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

#define SKIP_WITHOUT_CGROUPS()                                                          \
  do {                                                                                  \
    const Status access = check_cgroup_access();                                        \
    if (!access.is_ok()) GTEST_SKIP() << "no cgroup write access: " << access.message(); \
    if (is_cgroup_v2()) GTEST_SKIP() << "these checks read cgroup v1 files";             \
  } while (0)

TEST(CgroupThrottler, CreateApplyAttachRemove) {
  SKIP_WITHOUT_CGROUPS();
  const std::string run_id = "test/../" + std::to_string(::getpid());  // sanitised: stays one folder
  const std::string dir = "/sys/fs/cgroup/cpu/" + cgroup_run_folder(run_id);
  auto t = make_cgroup_throttler({run_id, {0.5, 0.05}, 0.010, ""});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ResourceThrottler& th = **t;
  EXPECT_TRUE(th.can_change_live());
  ASSERT_TRUE(std::filesystem::is_directory(dir + "/w0")) << dir;
  EXPECT_EQ(read(dir + "/w0/cpu.cfs_period_us"), "10000");
  EXPECT_EQ(read(dir + "/w0/cpu.cfs_quota_us"), "5000");
  EXPECT_EQ(read(dir + "/w1/cpu.cfs_quota_us"), "1000");  // 0.05 cores: 1 ms per 20 ms
  EXPECT_EQ(read(dir + "/w1/cpu.cfs_period_us"), "20000");
  ASSERT_TRUE(th.apply(0, 0.5).is_ok());
  EXPECT_EQ(read(dir + "/w0/cpu.cfs_quota_us"), "2500");
  EXPECT_FALSE(th.apply(0, 1.5).is_ok());
  EXPECT_FALSE(th.apply(5, 0.5).is_ok());

  const pid_t child = ::fork();
  if (child == 0) {
    for (;;) ::pause();
  }
  ASSERT_TRUE(th.attach(1, child).is_ok());
  EXPECT_EQ(read(dir + "/w1/cgroup.procs"), std::to_string(child));
  EXPECT_TRUE(std::filesystem::is_directory("/sys/fs/cgroup/freezer/" + cgroup_run_folder(run_id) + "/w1"));

  ASSERT_TRUE(th.remove().is_ok());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);  // remove() kills what is left
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/freezer/" + cgroup_run_folder(run_id)));
  EXPECT_TRUE(th.remove().is_ok());  // idempotent
}

TEST(CgroupThrottler, DestructorRemovesGroups) {
  SKIP_WITHOUT_CGROUPS();
  const std::string run_id = "dtor-" + std::to_string(::getpid());
  {
    auto t = make_cgroup_throttler({run_id, {0.3}, 0.010, ""});
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    EXPECT_TRUE(std::filesystem::exists("/sys/fs/cgroup/cpu/" + cgroup_run_folder(run_id)));
  }
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/cpu/" + cgroup_run_folder(run_id)));
}

TEST(CgroupThrottler, QuotaLimitsABusyLoop) {
  SKIP_WITHOUT_CGROUPS();
  auto t = make_cgroup_throttler({"busy-" + std::to_string(::getpid()), {0.25}, 0.010, ""});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const pid_t child = ::fork();
  if (child == 0) {
    volatile unsigned long spin = 0;  // NOLINT: a busy loop the optimiser keeps
    for (;;) spin = static_cast<unsigned long>(spin) + 1;
  }
  ASSERT_TRUE((*t)->attach(0, child).is_ok());
  auto before = cgroup_cpu_usage_s(**t, 0);
  ASSERT_TRUE(before.is_ok()) << before.status().message();
  ::usleep(600000);
  auto after = cgroup_cpu_usage_s(**t, 0);
  ASSERT_TRUE(after.is_ok());
  const double share = (*after - *before) / 0.6;
  std::printf("busy loop under a 0.25-core quota got %.3f cores\n", share);
  EXPECT_LT(share, 0.35);
  EXPECT_GT(share, 0.10);
  ASSERT_TRUE((*t)->remove().is_ok());
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace omnilearn::emulator
