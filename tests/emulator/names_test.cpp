#include "omnilearn/emulator/names.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace omnilearn::emulator {
namespace {

TEST(SanitizeName, KeepsOnlySafeCharacters) {
  EXPECT_EQ(sanitize_name("bsp-hl8_1"), "bsp-hl8_1");
  EXPECT_EQ(sanitize_name("../../etc/passwd"), "______etc_passwd");
  EXPECT_EQ(sanitize_name("a b;rm -rf $HOME"), "a_b_rm_-rf__HOME");
  EXPECT_EQ(sanitize_name(""), "run");
  EXPECT_EQ(sanitize_name(std::string(200, 'x')).size(), 64u);
  EXPECT_EQ(sanitize_name("\xc3\xa9t\xc3\xa9"), "__t__");
}

TEST(SanitizeName, RunFolderCannotLeaveTheProjectFolder) {
  for (const char* id : {"..", "/", "a/../../b", ".hidden", "x\ny"}) {
    const std::string f = cgroup_run_folder(id);
    EXPECT_EQ(f.rfind("omnilearn-", 0), 0u);
    EXPECT_EQ(f.find('/'), std::string::npos) << f;
    EXPECT_EQ(f.find('.'), std::string::npos) << f;
  }
}

// Issue 12 #1: a long scenario name cut the pid off ("name-pid" at 64 characters), so two concurrent runs shared
// one cgroup tree. The owner part (pid, start time, nonce) is now never cut.
TEST(RunId, TwoLaunchersWithALongScenarioNameGetDifferentFolders) {
  const std::string name(200, 'x');
  const LauncherId a{4242, 1000, 0x1234abcd}, b{4243, 1000, 0x1234abcd}, c{4242, 1000, 0x0badf00d};
  const std::string fa = cgroup_run_folder(make_run_id(name, -1, a));
  EXPECT_NE(fa, cgroup_run_folder(make_run_id(name, -1, b)));
  EXPECT_NE(fa, cgroup_run_folder(make_run_id(name, -1, c)));
  EXPECT_EQ(fa, "omnilearn-" + std::string(24, 'x') + "-p4242-s1000-1234abcd");
  EXPECT_EQ(cgroup_run_folder(make_run_id("../a b", 1, a)), "omnilearn-___a_b-node1-p4242-s1000-1234abcd");
}

TEST(RunId, TheOwnerRoundTripsThroughTheFolderName) {
  const LauncherId id{4194304, 18446744073709551615ull, 0xffffffff};
  const std::vector<std::string> names = {"", "bsp-hl8", "a-p1-s2-00000000", std::string(300, '-')};
  for (const std::string& name : names) {
    const auto parsed = parse_cgroup_run_folder(cgroup_run_folder(make_run_id(name, 3, id)));
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, id);
  }
}

TEST(RunId, OtherNamesAreNeverTakenForARunOfOurs) {
  for (const char* folder : {"omnilearn-bsp-hl8-1234", "omnilearn-calibrate-99", "omnilearn-", "user.slice",
                             "omnilearn-x-p12-s34-1234abc", "omnilearn-x-p12-s34-1234abcg", "omnilearn-x-q12-s34-1234abcd",
                             "omnilearn-x-p0-s34-1234abcd", "omnilearn-x-p-12-s34-1234abcd", "xomnilearn-x-p12-s34-1234abcd",
                             "omnilearn-p12-s34-1234abcd"}) {
    EXPECT_FALSE(parse_cgroup_run_folder(folder).has_value()) << folder;
  }
}

TEST(RunId, ThisLauncherKnowsItsStartTime) {
  const LauncherId me = this_launcher();
  EXPECT_EQ(me.pid, ::getpid());
  ASSERT_TRUE(process_start_ticks(me.pid).has_value());
  EXPECT_EQ(me.start_ticks, *process_start_ticks(me.pid));
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_FALSE(process_start_ticks(0).has_value());
}

}  // namespace
}  // namespace omnilearn::emulator
