#include "omnilearn/emulator/names.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace omnilearn::emulator
