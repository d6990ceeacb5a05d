// The launcher's run folder (run::RunFolder): a folder another run holds, or one that is not empty, is refused
// before any cgroup or worker exists; LaunchOptions.reuse = kReplace replaces an earlier run's files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "omnilearn/emulator/fake_throttler.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

LaunchOptions options_with_counted_throttler(const std::string& out, int& throttlers) {
  LaunchOptions o;
  o.output_dir = out;
  o.worker_executable = OMNILEARN_FAKE_WORKER;
  o.extra_worker_args = {"--fake-steps", "3"};
  o.prepare_dataset = false;
  o.log = [](const std::string&) {};
  o.make_throttler = [&throttlers](const std::string&,
                                   const std::vector<double>& cores) -> Result<WorkerGroups> {
    ++throttlers;
    return WorkerGroups{std::unique_ptr<ResourceThrottler>(new FakeThrottler(cores.size())), {}};
  };
  return o;
}

// Issue 12 #4: two emulate runs into one folder both wrote it; the second is now refused before it starts.
TEST(LauncherFolder, AFolderInUseOrNotEmptyIsRefusedBeforeAnythingStarts) {
  const std::string dir = testing::fresh_dir("folder");
  auto scenario = scenarios::load_scenario(testing::write_scenario(dir, "folder"));
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  int throttlers = 0;
  {
    auto held = run::RunFolder::claim(dir + "/run");
    ASSERT_TRUE(held.is_ok());
    auto r = run_emulation(*scenario, options_with_counted_throttler(dir + "/run", throttlers));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("in use by another omnilearn run"), std::string::npos) << r.status().message();
    EXPECT_EQ(throttlers, 0);
  }
  std::ofstream(dir + "/run/summary.json") << "{\"old\": true}";
  auto r = run_emulation(*scenario, options_with_counted_throttler(dir + "/run", throttlers));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("not empty"), std::string::npos) << r.status().message();
  EXPECT_EQ(throttlers, 0);

  LaunchOptions replace = options_with_counted_throttler(dir + "/run", throttlers);
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
