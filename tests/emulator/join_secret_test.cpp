// The several-hosts join check's pieces (join_secret.h); the check itself runs in multihost_test.
#include "omnilearn/emulator/join_secret.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

TEST(JoinSecret, ProofsDependOnSecretChallengeAndRank) {
  const std::string p = join_proof("secret", "abc", 1);
  EXPECT_EQ(p.size(), 64u);
  EXPECT_EQ(p, join_proof("secret", "abc", 1));
  std::set<std::string> all{p, join_proof("secret", "abc", 2), join_proof("secret", "abd", 1),
                            join_proof("secreT", "abc", 1), serve_proof("secret", "abc", "n1", 1),
                            serve_proof("secret", "abc", "n2", 1), serve_proof("secret", "abc", "n1", 2)};
  EXPECT_EQ(all.size(), 7u);  // rank 0's answer depends on each rank's own nonce: an old one cannot be replayed
  EXPECT_EQ(p.find("secret"), std::string::npos);
  EXPECT_TRUE(proofs_equal(p, join_proof("secret", "abc", 1)));
  EXPECT_FALSE(proofs_equal(p, join_proof("secret", "abc", 2)));
  EXPECT_FALSE(proofs_equal(p, p.substr(1)));
}

TEST(JoinSecret, ChallengesAreFresh) {
  auto a = random_challenge(), b = random_challenge();
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
}

TEST(JoinSecret, SecretFileMustBePrivateAndNonEmpty) {
  const std::string dir = testing::fresh_dir("secret");
  const std::string file = dir + "/secret";
  std::ofstream(file) << "hunter2\n";
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  auto ok = read_secret_file(file);
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(*ok, "hunter2");
  fs::permissions(file, fs::perms::group_read, fs::perm_options::add);
  auto shared = read_secret_file(file);
  ASSERT_FALSE(shared.is_ok());
  EXPECT_NE(shared.status().message().find("chmod 600"), std::string::npos) << shared.status().message();
  const std::string empty = dir + "/empty";
  std::ofstream(empty) << "\n";
  fs::permissions(empty, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  auto e = read_secret_file(empty);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find(empty), std::string::npos);
  EXPECT_FALSE(read_secret_file(dir + "/missing").is_ok());
}

}  // namespace
}  // namespace omnilearn::emulator
