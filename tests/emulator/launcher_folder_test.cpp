// The launcher's run folder (run::RunFolder): a folder another run holds, or one that is not empty, is refused
// before any cgroup or worker exists; LaunchOptions.reuse = kReplace replaces an earlier run's files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "omnilearn/emulator/launcher.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "fake_launch_environment.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

// A quiet launch of the fake worker into `out`, in `env` (which counts the resource groups made).
LaunchOptions fake_options(const std::string& out, std::shared_ptr<LaunchEnvironment> env) {
  LaunchOptions o;
  o.output_dir = out;
  o.environment = std::move(env);
  o.log = [](const std::string&) {};
  return o;
}

// Issue 12 #4: two emulate runs into one folder both wrote it; the second is now refused before it starts.
TEST(LauncherFolder, AFolderInUseOrNotEmptyIsRefusedBeforeAnythingStarts) {
  const std::string dir = testing::fresh_dir("folder");
  auto scenario = scenarios::load_scenario(testing::write_scenario(dir, "folder"));
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  const auto env = std::make_shared<testing::FakeLaunchEnvironment>(OMNILEARN_FAKE_WORKER,
                                                                     std::vector<std::string>{"--fake-steps", "3"});
  {
    auto held = run::RunFolder::claim(dir + "/run");
    ASSERT_TRUE(held.is_ok());
    auto r = run_emulation(*scenario, fake_options(dir + "/run", env));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("in use by another omnilearn run"), std::string::npos) << r.status().message();
    EXPECT_EQ(env->groups_made, 0);
  }
  std::ofstream(dir + "/run/summary.json") << "{\"old\": true}";
  auto r = run_emulation(*scenario, fake_options(dir + "/run", env));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("not empty"), std::string::npos) << r.status().message();
  EXPECT_EQ(env->groups_made, 0);

  LaunchOptions replace = fake_options(dir + "/run", env);
  replace.reuse = run::FolderReuse::kReplace;
  r = run_emulation(*scenario, replace);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0) << r->message;
  std::ifstream in(dir + "/run/summary.json");
  const std::string summary((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(summary.find("\"old\""), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/run/.omnilearn.lock"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace omnilearn::emulator
