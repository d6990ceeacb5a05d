// Subprocess (base/subprocess.h): output, exit status and errors of a started program, the gate before exec, and
// the guarantee that a child does not outlive a parent killed with SIGKILL.
#include "omnilearn/base/subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace omnilearn {
namespace {

namespace fs = std::filesystem;

TEST(Subprocess, CapturesOutputAndExitStatus) {
  SpawnOptions o;
  o.search_path = true;
  o.pipe_output = true;
  o.env = std::vector<std::string>{"GREETING=hello"};
  auto child = Subprocess::start({"sh", "-c", "echo $GREETING; echo oops >&2; exit 3"}, o);
  ASSERT_TRUE(child.is_ok()) << child.status().message();
  EXPECT_EQ(child->read_all(), "hello\noops\n");
  child->wait();
  EXPECT_TRUE(WIFEXITED(child->status()) && WEXITSTATUS(child->status()) == 3) << describe_exit(child->status());
  EXPECT_EQ(describe_exit(child->status()), "exited with code 3");
}

TEST(Subprocess, FeedsInputAndWritesFiles) {
  const fs::path dir = fs::temp_directory_path() / ("omnilearn-subprocess-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SpawnOptions o;
  o.stdout_file = o.stderr_file = (dir / "log").string();
  o.working_dir = dir.string();
  auto status = Subprocess::run({"/bin/sh", "-c", "cat; pwd; echo err >&2"}, o, "typed\n");
  ASSERT_TRUE(status.is_ok()) << status.status().message();
  EXPECT_EQ(*status, 0);
  std::ifstream in(dir / "log");
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(log, "typed\n" + fs::canonical(dir).string() + "\nerr\n");
  fs::remove_all(dir);
}

TEST(Subprocess, AProgramThatCannotStartIsAnError) {
  auto missing = Subprocess::start({"/nonexistent/program"});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/program"), std::string::npos) << missing.status().message();
  SpawnOptions o;
  o.search_path = true;
  auto unknown = Subprocess::start({"omnilearn-no-such-program"}, o);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("not found in PATH"), std::string::npos) << unknown.status().message();
}

// The gate: the program runs only once before_exec returned ok; an error kills the child before it runs anything.
TEST(Subprocess, TheProgramRunsOnlyAfterBeforeExecSaidSo) {
  const fs::path mark = fs::temp_directory_path() / ("omnilearn-subprocess-mark-" + std::to_string(::getpid()));
  fs::remove(mark);
  SpawnOptions o;
  pid_t seen = 0;
  o.before_exec = [&](pid_t pid) {
    seen = pid;
    return Status::permission_denied("not in its group");
  };
  auto refused = Subprocess::start({"/bin/sh", "-c", "touch " + mark.string()}, o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_GT(seen, 0);
  EXPECT_FALSE(::kill(seen, 0) == 0) << "the refused child still exists";
  EXPECT_FALSE(fs::exists(mark));

  o.before_exec = [&](pid_t) {
    EXPECT_FALSE(fs::exists(mark)) << "the program ran before it was released";
    return Status::ok();
  };
  auto released = Subprocess::start({"/bin/sh", "-c", "touch " + mark.string()}, o);
  ASSERT_TRUE(released.is_ok()) << released.status().message();
  released->wait();
  EXPECT_TRUE(fs::exists(mark));
  fs::remove(mark);
}

// A parent killed with SIGKILL leaves no child: the child gets the death signal.
TEST(Subprocess, AChildDiesWithItsParent) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t parent = ::fork();
  if (parent == 0) {
    auto child = Subprocess::start({"/bin/sleep", "30"});
    const pid_t pid = child.is_ok() ? child->pid() : -1;
    (void)!::write(pipe_fds[1], &pid, sizeof pid);
    if (child.is_ok()) (void)child->release();
    ::raise(SIGKILL);
  }
  ::close(pipe_fds[1]);
  pid_t child = -1;
  ASSERT_EQ(::read(pipe_fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(pipe_fds[0]);
  ASSERT_GT(child, 0);
  ::waitpid(parent, nullptr, 0);
  // The orphan is reparented (to init or a subreaper) and killed; wait until /proc says it is gone or a zombie.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string text;
    gone = !std::getline(stat, text) || text.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "child " << child << " outlived its parent";
}

TEST(Subprocess, DestroyingARunningChildKillsAndReapsIt) {
  pid_t pid = -1;
  {
    auto child = Subprocess::start({"/bin/sleep", "30"});
    ASSERT_TRUE(child.is_ok()) << child.status().message();
    pid = child->pid();
    EXPECT_FALSE(child->poll_exit());
  }
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped: not even a zombie is left
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace omnilearn
