// Stale-cgroup clean-up (issue 12 #7: a launcher killed with SIGKILL leaked its groups and no later run removed
// them). Real cgroups: needs write access to a cgroup v1 tree; skipped with the reason otherwise.
#include "omnilearn/emulator/cgroup_cleanup.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "omnilearn/emulator/cgroup_throttler.h"
#include "cgroup_skip.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

// A pid that belonged to a process that has exited (and was reaped).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// Makes <root>/<folder>/w0 in the cpu and freezer hierarchies.
void make_groups(const std::string& folder) {
  for (const char* c : {"cpu", "freezer"}) fs::create_directories(fs::path("/sys/fs/cgroup") / c / folder / "w0");
}

bool exists_anywhere(const std::string& folder) {
  return fs::exists(fs::path("/sys/fs/cgroup/cpu") / folder) || fs::exists(fs::path("/sys/fs/cgroup/freezer") / folder);
}

TEST(CgroupCleanup, RemovesDeadLaunchersGroupsAndKillsWhatIsLeftInThem) {
  SKIP_WITHOUT_CGROUP_V1("this test builds cgroup v1 folders by hand");
  const LauncherId me = this_launcher();
  // A dead launcher's run, with a leftover (frozen) task in it.
  const std::string dead = cgroup_run_folder(make_run_id("cleanup-dead", -1, {dead_pid(), 12345, me.nonce}));
  // This (live) process's pid but another start time: the pid was reused, so that run is gone too.
  const std::string reused = cgroup_run_folder(make_run_id("cleanup-reused", -1, {me.pid, me.start_ticks + 1, me.nonce}));
  // A live launcher's run (this process), and a folder of the older naming: both must be kept.
  const std::string live = cgroup_run_folder(make_run_id("cleanup-live", -1, me));
  const std::string old_style = "omnilearn-cleanup-old-" + std::to_string(dead_pid());
  for (const std::string& f : {dead, reused, live, old_style}) make_groups(f);

  const pid_t leftover = ::fork();
  if (leftover == 0) {
    for (;;) ::pause();
  }
  for (const char* c : {"cpu", "freezer"}) {
    std::ofstream(fs::path("/sys/fs/cgroup") / c / dead / "w0" / "cgroup.procs") << leftover << "\n";
  }
  std::ofstream(fs::path("/sys/fs/cgroup/freezer") / dead / "w0" / "freezer.state") << "FROZEN\n";

  const CgroupCleanup done = remove_stale_cgroups();
  EXPECT_TRUE(done.status.is_ok()) << done.status.message();
  auto removed = [&](const std::string& f) {
    return std::any_of(done.removed.begin(), done.removed.end(),
                       [&](const std::string& p) { return fs::path(p).filename() == f; });
  };
  EXPECT_TRUE(removed(dead));
  EXPECT_TRUE(removed(reused));
  EXPECT_FALSE(removed(live));
  EXPECT_FALSE(removed(old_style));
  EXPECT_FALSE(exists_anywhere(dead));
  EXPECT_FALSE(exists_anywhere(reused));
  EXPECT_TRUE(exists_anywhere(live));
  EXPECT_TRUE(exists_anywhere(old_style));
  int status = 0;
  EXPECT_EQ(::waitpid(leftover, &status, 0), leftover);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  for (const std::string& f : {live, old_style}) {
    for (const char* c : {"cpu", "freezer"}) {
      ::rmdir((fs::path("/sys/fs/cgroup") / c / f / "w0").c_str());
      ::rmdir((fs::path("/sys/fs/cgroup") / c / f).c_str());
    }
  }
}

TEST(CgroupCleanup, ALiveLauncherIsAlive) {
  EXPECT_TRUE(launcher_alive(this_launcher()));
  EXPECT_FALSE(launcher_alive({dead_pid(), 1, 0}));
  const LauncherId me = this_launcher();
  EXPECT_FALSE(launcher_alive({me.pid, me.start_ticks + 1, me.nonce}));
}

}  // namespace
}  // namespace omnilearn::emulator
