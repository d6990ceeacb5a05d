// SimGrid's settings from the command line: `omnilearn sim --cfg/--log` reach the engine and the manifest, a bad
// one is an error naming it (not SimGrid's abort), and `omnilearn sweep` passes them to every point.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace omnilearn::cli::testing {
namespace {

nlohmann::json manifest(const TempDir& dir, const std::string& run) {
  return nlohmann::json::parse(read_file(dir.at(run + "/manifest.json")));
}

TEST(CliSimGridSettings, CfgAndLogReachTheManifestAndChangeTheResult) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  const RunResult base = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--out", dir.at("cm02")}, dir.path());
  ASSERT_EQ(base.exit_code, 0) << base.err;
  const RunResult lv08 = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--out", dir.at("lv08"),
                                        "--cfg=network/model:LV08", "--log", "root.thres:critical"},
                                       dir.path());
  ASSERT_EQ(lv08.exit_code, 0) << lv08.err;
  const auto args = manifest(dir, "lv08")["simgrid_args"];
  ASSERT_GE(args.size(), 2u);
  EXPECT_EQ(args[args.size() - 2], "--cfg=network/model:LV08");
  EXPECT_EQ(args.back(), "--log=root.thres:critical");
  EXPECT_NE(read_file(dir.at("cm02/summary.json")), read_file(dir.at("lv08/summary.json")));
}

TEST(CliSimGridSettings, ABadSettingIsAnErrorNamingIt) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  for (const std::string arg : {"--cfg=network/model:Nope", "--cfg=bogus/key:1", "--log=bad"}) {
    const RunResult r = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--out", dir.at("bad"), "--force", arg},
                                      dir.path());
    EXPECT_EQ(r.exit_code, 1) << arg << ": " << r.err;
    EXPECT_NE(r.err.find(arg.substr(arg.find('=') + 1)), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Backtrace"), std::string::npos) << r.err;
  }
}

TEST(CliSimGridSettings, SweepPassesThemToEveryPoint) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  dir.write("small.yaml", "name: small\nbase: quick.yaml\naxes:\n  policy.name: [uniform, omnilearn]\n");
  const RunResult r = run_omnilearn({"sweep", dir.at("small.yaml"), "--quiet", "--out", dir.at("out"),
                                     "--cfg=network/model:LV08", "--log=root.thres:error"},
                                    dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int points = 0;
  for (const auto& entry : fs::directory_iterator(dir.at("out"))) {
    if (!fs::exists(entry.path() / "manifest.json")) continue;
    ++points;
    const auto args = nlohmann::json::parse(read_file(entry.path() / "manifest.json"))["simgrid_args"];
    EXPECT_NE(std::find(args.begin(), args.end(), "--cfg=network/model:LV08"), args.end()) << entry.path();
    EXPECT_NE(std::find(args.begin(), args.end(), "--log=root.thres:error"), args.end()) << entry.path();
  }
  EXPECT_EQ(points, 2);
  const RunResult slurm = run_omnilearn({"sweep", dir.at("small.yaml"), "--emit-slurm", dir.at("job.sh"), "--out",
                                         dir.at("slurm-out"), "--cfg=network/model:LV08"},
                                        dir.path());
  ASSERT_EQ(slurm.exit_code, 0) << slurm.err;
  EXPECT_NE(read_file(dir.at("job.sh")).find("'--cfg=network/model:LV08'"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::cli::testing
