// The real cgroup throttler. Needs write access to the cgroup tree; skipped with the reason otherwise.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/duty_cycle_throttler.h"
#include "omnilearn/emulator/names.h"
#include "omnilearn/emulator/thread_groups.h"
#include "cgroup_skip.h"

namespace omnilearn::emulator {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// The cgroup path of thread `tid` of this process in the v1 hierarchy that holds `controller` ("" if none).
std::string thread_cgroup(pid_t tid, const std::string& controller) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/cgroup");
  // Lines "id:controller[,controller...]:path".
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::stringstream names(line.substr(a + 1, b - a - 1));
    for (std::string name; std::getline(names, name, ',');) {
      if (name == controller) return line.substr(b + 1);
    }
  }
  return {};
}

// A child process that spins on one CPU until it is killed.
pid_t fork_busy_loop() {
  const pid_t child = ::fork();
  if (child == 0) {
    volatile unsigned long spin = 0;  // NOLINT: a busy loop the optimiser keeps
    for (;;) spin = static_cast<unsigned long>(spin) + 1;
  }
  return child;
}

TEST(CgroupThrottler, CreateApplyAttachRemove) {
  SKIP_WITHOUT_CGROUP_V1("these checks read cgroup v1 files");
  const std::string run_id = "test/../" + std::to_string(::getpid());  // sanitised: stays one folder
  const std::string dir = "/sys/fs/cgroup/cpu/" + cgroup_run_folder(run_id);
  auto t = make_cgroup_throttler({run_id, {0.5, 0.05}, 0.010, ""});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ResourceThrottler& th = **t;
  ASSERT_TRUE(std::filesystem::is_directory(dir + "/w0")) << dir;
  EXPECT_EQ(read(dir + "/w0/cpu.cfs_period_us"), "10000");
  EXPECT_EQ(read(dir + "/w0/cpu.cfs_quota_us"), "5000");
  EXPECT_EQ(read(dir + "/w1/cpu.cfs_quota_us"), "1000");  // 0.05 cores: 1 ms per 20 ms
  EXPECT_EQ(read(dir + "/w1/cpu.cfs_period_us"), "20000");
  EXPECT_EQ(read(dir + "/cpu.shares"), "262144");  // the run's folder outweighs the host's other processes
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
  SKIP_WITHOUT_CGROUP_V1("these checks read cgroup v1 files");
  const std::string run_id = "dtor-" + std::to_string(::getpid());
  {
    auto t = make_cgroup_throttler({run_id, {0.3}, 0.010, ""});
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    EXPECT_TRUE(std::filesystem::exists("/sys/fs/cgroup/cpu/" + cgroup_run_folder(run_id)));
  }
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/cpu/" + cgroup_run_folder(run_id)));
}

TEST(CgroupThrottler, QuotaLimitsABusyLoop) {
  SKIP_WITHOUT_CGROUP_V1("these checks read cgroup v1 files");
  auto t = make_cgroup_throttler({"busy-" + std::to_string(::getpid()), {0.25}, 0.010, ""});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const pid_t child = fork_busy_loop();
  ASSERT_TRUE((*t)->attach(0, child).is_ok());
  auto before = (*t)->cpu_usage_s(0);
  ASSERT_TRUE(before.is_ok()) << before.status().message();
  ::usleep(600000);
  auto after = (*t)->cpu_usage_s(0);
  ASSERT_TRUE(after.is_ok());
  const double share = (*after - *before) / 0.6;
  std::printf("busy loop under a 0.25-core quota got %.3f cores\n", share);
  EXPECT_LT(share, 0.35);
  EXPECT_GT(share, 0.10);
  ASSERT_TRUE((*t)->remove().is_ok());
  ::waitpid(child, nullptr, 0);
}

// emulator.throttle: compute. A thread started after the snapshot moves into w0-comm (no quota) in every
// controller; the calling thread stays where it was. The thread is moved back before the groups go (remove()
// kills what is left in them).
TEST(CgroupThrottler, SplitCommMovesOnlyNewThreads) {
  SKIP_WITHOUT_CGROUP_V1("these checks read cgroup v1 files");
  const std::string run_id = "split-" + std::to_string(::getpid());
  const std::string folder = cgroup_run_folder(run_id);
  auto t = make_cgroup_throttler({run_id, {0.25}, 0.010, "", scenarios::QuotaScope::kCompute});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const std::vector<std::string> files = (*t)->thread_files(0).comm;
  ASSERT_EQ(files.size(), 3u);  // cpu, cpuacct, freezer
  EXPECT_EQ(files[0], "/sys/fs/cgroup/cpu/" + folder + "/w0-comm/tasks");
  EXPECT_EQ(read("/sys/fs/cgroup/cpu/" + folder + "/w0-comm/cpu.cfs_quota_us"), "-1");
  EXPECT_EQ(read("/sys/fs/cgroup/cpu/" + folder + "/w0/cpu.cfs_quota_us"), "2500");
  EXPECT_TRUE((*t)->thread_files(1).comm.empty());
  const std::vector<std::string> back = (*t)->thread_files(0).compute;
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0], "/sys/fs/cgroup/cpu/" + folder + "/w0/tasks");

  const pid_t self = static_cast<pid_t>(::syscall(SYS_gettid));
  const std::string cpu_before = thread_cgroup(self, "cpu");
  const std::vector<pid_t> before = own_thread_ids();
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  pid_t tid = 0;
  std::thread comm([&] {
    std::unique_lock lock(m);
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    cv.notify_all();
    cv.wait(lock, [&] { return stop; });
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return tid != 0; });
  }
  const Status missing = move_new_threads(before, {"/sys/fs/cgroup/cpu/" + folder + "/no-such-group/tasks"});
  EXPECT_FALSE(missing.is_ok());
  EXPECT_NE(missing.message().find("no-such-group/tasks"), std::string::npos) << missing.message();
  const Status moved = move_new_threads(before, files);
  EXPECT_TRUE(moved.is_ok()) << moved.message();
  for (const char* c : {"cpu", "cpuacct", "freezer"}) {
    EXPECT_EQ(thread_cgroup(tid, c), "/" + folder + "/w0-comm") << c;
  }
  EXPECT_EQ(thread_cgroup(self, "cpu"), cpu_before);
  // Under the quota (how rank 0 returns from an unthrottled evaluation), then back where it came from.
  ASSERT_TRUE(move_thread(tid, back).is_ok());
  EXPECT_EQ(thread_cgroup(tid, "freezer"), "/" + folder + "/w0");
  for (const char* c : {"cpu", "cpuacct", "freezer"}) {
    const std::string home = thread_cgroup(self, c);
    std::ofstream(std::string("/sys/fs/cgroup/") + c + (home == "/" ? "" : home) + "/tasks") << tid;
  }
  EXPECT_EQ(thread_cgroup(tid, "cpu"), cpu_before);
  {
    std::lock_guard lock(m);
    stop = true;
  }
  cv.notify_all();
  comm.join();
  ASSERT_TRUE((*t)->remove().is_ok());
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/cpu/" + folder));
}

// Dynamic availability where the share is fixed at start (CUDA MPS): the freezer duty cycle. Two claims, each
// measured in a way that holds beside busy neighbours: (1) the cycle keeps the group thawed for 0.3 of the wall time
// (its own thaw-to-freeze account; a window that ran long because the cycle woke late is paid back), and (2) the
// loop runs only while thawed: the CPU it got at duty 0.3 is what it gets free, scaled by the thawed fraction.
// "What it gets free" is measured just before and just after (the mean of the two, as the neighbours' load drifts).
TEST(CgroupThrottler, FreezerDutyCycleHoldsABusyLoopToItsFraction) {
  SKIP_WITHOUT_CGROUP_V1("these checks read cgroup v1 files");
  auto t = make_cgroup_throttler({"duty-" + std::to_string(::getpid()), {1.0}, 0.010, ""});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const CgroupThrottler* inner = t->get();
  auto d = DutyCycleThrottler::wrap(std::move(t).value(), 1, 0.050);
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const DutyCycleThrottler* cycle = d->get();
  const pid_t child = fork_busy_loop();
  ASSERT_TRUE((*d)->attach(0, child).is_ok());
  struct Window {
    double cores;   // CPU seconds the loop got per second of the window
    double thawed;  // the fraction of the window the cycle kept it thawed
  };
  auto usage = [&] {
    auto u = inner->cpu_usage_s(0);
    return u.is_ok() ? *u : -1.0;
  };
  auto measure = [&](int ms) {  // per second of the measured window: a busy host wakes a sleeper late
    const double a = usage();
    const double ta = cycle->thawed_s(0);
    const auto t0 = std::chrono::steady_clock::now();
    ::usleep(static_cast<useconds_t>(ms) * 1000);
    const double b = usage();
    const double tb = cycle->thawed_s(0);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return Window{(b - a) / wall, (tb - ta) / wall};
  };
  const Window full = measure(400);
  ASSERT_TRUE((*d)->apply(0, 0.3).is_ok());
  ::usleep(100000);
  const Window part = measure(2000);
  ASSERT_TRUE((*d)->apply(0, 1.0).is_ok());
  ::usleep(100000);
  const Window again = measure(400);
  std::printf("busy loop: %.3f cores free, %.3f at duty 0.3 (thawed %.3f of the time), %.3f free again\n", full.cores,
              part.cores, part.thawed, again.cores);
  const double free_cores = 0.5 * (full.cores + again.cores);
  if (free_cores < 0.1) {  // a host so busy that the comparison is noise
    (void)(*d)->remove();
    ::waitpid(child, nullptr, 0);
    GTEST_SKIP() << "host too busy for this timing test: a free busy loop got " << free_cores << " of a core (< 0.1)";
  }
  // (1) The cycle's account: thawed for the fraction (the account's accuracy is one period in the 2 s window).
  EXPECT_NEAR(part.thawed, 0.3, 0.05);
  // (2) The loop runs only while thawed: its CPU is the free rate over the thawed time (and never more than the
  // thawed time itself, one core at most while thawed).
  EXPECT_NEAR(part.cores / free_cores, part.thawed, 0.1);
  EXPECT_LT(part.cores, part.thawed + 0.05);
  EXPECT_GT(again.cores, 2.0 * part.cores);  // free again: well above the duty level
  EXPECT_TRUE((*d)->cycle_status().is_ok());
  ASSERT_TRUE((*d)->remove().is_ok());  // thaws, then kills what is left in the group
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace omnilearn::emulator
