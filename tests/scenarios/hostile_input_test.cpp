// Hostile scenario and sweep files (issue 12): bytes that are not UTF-8, control characters, names that would
// leave the run folder, deep nesting, alias bombs and sizes that would exhaust memory are refused by the parser
// with file, line and field, before anything runs. Each case failed (or aborted) before the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/scenarios/scenario_json.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/scenarios/sweep.h"
#include "bad_case.h"
#include "temp_dir.h"

namespace omnilearn::scenarios {
namespace {

using testing::TempDir;

// Line 1 name, 2 cluster, 3-4 nodes, 5 workload.
constexpr const char* kBase =
    "name: base\n"
    "cluster:\n"
    "  nodes:\n"
    "    - {name: a, cores: 4, speed: 4e9}\n"
    "workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1}\n";

std::string with(const std::string& from, const std::string& to) { return testing::replace_once(kBase, from, to); }

using HostileCase = testing::BadCase;

TEST(HostileScenario, EachIsRefusedWithFileLineAndField) {
  const std::vector<HostileCase> cases{
      {"invalid UTF-8 in the name",
       with("name: base", "name: \"b\xff\xfe\""),
       {},
       {"dir/x.yaml:1: name: expected UTF-8 text"}},
      {"invalid UTF-8 in a worker name",
       with("name: a,", "name: \"\xc3\x28\","),
       {},
       {"dir/x.yaml:4: cluster.nodes[0].name: expected UTF-8"}},
      {"an overlong encoding", with("name: base", "name: \"\xc0\xaf\""), {}, {"dir/x.yaml:1: name: expected UTF-8"}},
      {"invalid UTF-8 in a key", std::string(kBase) + "\xff: 1\n", {}, {"dir/x.yaml:6:", "key: expected UTF-8"}},
      {"invalid UTF-8 in an override",
       kBase,
       {"name=\"\xed\xa0\x80\""},
       {"dir/x.yaml (--set name=", "name: expected UTF-8"}},
      {"a newline in a value",
       with("name: base", "name: \"a\\nb\""),
       {},
       {"dir/x.yaml:1: name: expected text without control characters"}},
      {"a NUL in a value", with("name: base", "name: \"a\\0b\""), {}, {"dir/x.yaml:1: name:", "control characters"}},
      {"name ..", with("name: base", "name: .."), {}, {"dir/x.yaml:1: name: expected a name other than '.' or '..'"}},
      {"name .", with("name: base", "name: ."), {}, {"dir/x.yaml:1: name: expected a name other than"}},
      {"name with /", with("name: base", "name: a/b"), {}, {"dir/x.yaml:1: name: expected a name without '/'"}},
      {"name too long",
       with("name: base", "name: " + std::string(limits::kMaxNameBytes + 1, 'n')),
       {},
       {"dir/x.yaml:1: name: expected a name of at most 128 bytes"}},
      {"override name ..", kBase, {"name=.."}, {"(--set name=..): name: expected a name other than"}},
      {"worker name ..", with("name: a,", "name: ..,"), {}, {"dir/x.yaml:4: cluster.nodes[0].name: expected a name"}},
      {"worker name with /", with("name: a,", "name: ../x,"), {}, {"cluster.nodes[0].name: expected a name without"}},
      {"a non-scalar key", std::string(kBase) + "? [a, b]\n: 1\n", {}, {"dir/x.yaml:6:", "expected plain keys"}},
      {"too many preset workers",
       with("  nodes:\n    - {name: a, cores: 4, speed: 4e9}\n", "  preset: cloud\n  workers: 2000000\n"),
       {},
       {"dir/x.yaml:4: cluster.workers: expected at most 1000000 workers"}},
      {"too many counted workers",
       with("    - {name: a, cores: 4, speed: 4e9}\n", "    - &n {count: 600000, cores: 4, speed: 4e9}\n    - *n\n"),
       {},
       {"cluster.nodes[1].count: expected at most 1000000 workers in all"}},
      {"too many iterations",
       with("epochs: 1", "epochs: 1e14"),
       {},
       {"dir/x.yaml:5: workload.epochs: expected at most 1000000000 iterations"}},
      {"max_iterations too large",
       std::string(kBase) + "max_iterations: 1e12\n",
       {},
       {"dir/x.yaml:6: max_iterations: expected at most 1000000000"}},
      {"a random walk of 1us steps over a day",
       std::string(kBase) + "availability:\n  generator: {kind: random-walk, step: 1us, duration: 24h}\n",
       {},
       {"dir/x.yaml:7: availability.generator.step: expected at most 10000000 trace points"}},
      {"markov with a tiny mtbf",
       std::string(kBase) + "availability:\n  generator: {kind: markov, mtbf: 1us, mttr: 1us, duration: 24h}\n",
       {},
       {"dir/x.yaml:7: availability.generator.mtbf: expected at most 10000000 trace points"}},
  };
  for (const HostileCase& c : cases) testing::expect_refused(c, "dir/x.yaml");
}

TEST(HostileScenario, ValidUtf8AndGenerousGeneratorsStillParse) {
  auto r = parse_scenario(with("name: base", "name: \"r\xc3\xa9sum\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80\""), "x.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->name, "r\xc3\xa9sum\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80");
  // 1 worker x a day of 10 ms steps is 8.64M points: within the limit.
  auto g = parse_scenario(
      std::string(kBase) + "availability:\n  generator: {kind: random-walk, step: 10ms, duration: 24h}\n", "x.yaml");
  EXPECT_TRUE(g.is_ok()) << g.status().message();
}

TEST(HostileScenario, DeepNestingSaysSoInsteadOfBadFile) {
  for (const int depth : {limits::kMaxYamlDepth + 5, 5000}) {
    SCOPED_TRACE(depth);
    const std::string yaml = std::string(kBase) + "outputs: " + std::string(static_cast<std::size_t>(depth), '[') +
                             std::string(static_cast<std::size_t>(depth), ']') + "\n";
    auto r = parse_scenario(yaml, "dir/x.yaml");
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("dir/x.yaml:6"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("nesting is too deep (expected at most 64 levels"), std::string::npos)
        << r.status().message();
    EXPECT_EQ(r.status().message().find("bad file"), std::string::npos) << r.status().message();
  }
}

TEST(HostileScenario, AnAliasBombIsRefusedNotExpanded) {
  // 30 levels of doubling: 2^30 nodes once expanded, a few hundred bytes of text.
  std::string yaml = std::string(kBase) + "outputs:\n  l0: &l0 [x, x]\n";
  for (int i = 1; i <= 30; ++i) {
    yaml += "  l" + std::to_string(i) + ": &l" + std::to_string(i) + " [*l" + std::to_string(i - 1) + ", *l" +
            std::to_string(i - 1) + "]\n";
  }
  auto r = parse_scenario(yaml, "dir/x.yaml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("more than 1000000 nodes once its aliases are expanded"), std::string::npos)
      << r.status().message();
}

TEST(HostileScenario, JsonOfAScenarioWithInvalidUtf8DoesNotThrow) {
  auto r = parse_scenario(kBase, "x.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  Scenario s = *r;
  s.name = "bad\xff";  // a scenario built in code is not checked by the parser
  s.workload.model.name = "\xc3";
  std::string json;
  ASSERT_NO_THROW(json = scenario_to_json(s));
  EXPECT_NE(json.find("\"bad\xef\xbf\xbd\""), std::string::npos) << json;  // U+FFFD replaces the byte
}

TEST(HostileSweep, NameDotDotAndInvalidUtf8AreRefused) {
  TempDir dir;
  dir.write("s.yaml", kBase);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"name: ..\nbase: s.yaml\naxes:\n  seed: [1, 2]\n", "sweep.yaml:1: name: expected a name other than '.' or '..'"},
      {"name: .\nbase: s.yaml\n", "sweep.yaml:1: name: expected a name other than"},
      {"base: s.yaml\naxes:\n  seed: [1, \"\xff\"]\n", "sweep.yaml:3: axes.seed[1]: expected UTF-8"},
      {"base: s.yaml\naxes:\n  \"a\\tb\": [1]\n", "sweep.yaml:3: axes: key: expected text without control"},
      {"base: s.yaml\naxes:\n  seed: [" + std::string(250, '1') + "]\n", "axes: expected point names"},
  };
  for (const auto& [yaml, expected] : cases) {
    SCOPED_TRACE(yaml);
    auto sweep = load_sweep(dir.write("sweep.yaml", yaml));
    ASSERT_FALSE(sweep.is_ok());
    EXPECT_NE(sweep.status().message().find(expected), std::string::npos) << sweep.status().message();
  }
  // A file named "...yaml" would give the sweep name "..".
  auto dots = load_sweep(dir.write("...yaml", "base: s.yaml\n"));
  ASSERT_FALSE(dots.is_ok());
  EXPECT_NE(dots.status().message().find("the file's name gives the sweep name '..'"), std::string::npos)
      << dots.status().message();
}

TEST(HostileSweep, TooManyPointsAreRefusedBeforeExpanding) {
  TempDir dir;
  dir.write("s.yaml", kBase);
  std::string yaml = "base: s.yaml\naxes:\n";
  for (const char* axis :
       {"seed", "policy.every_n", "policy.gain", "policy.dead_band", "policy.ewma_alpha", "workload.epochs"}) {
    yaml += std::string("  ") + axis + ": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";  // 10^6 points
  }
  auto sweep = load_sweep(dir.write("sweep.yaml", yaml));
  ASSERT_FALSE(sweep.is_ok());
  EXPECT_NE(sweep.status().message().find("sweep.yaml:2: axes: expected at most 100000 points"), std::string::npos)
      << sweep.status().message();
}

TEST(HostileSweep, UnreadableBasePathsAreAnErrorNotAnAbort) {
  TempDir dir;
  // A path component over 255 bytes (ENAMETOOLONG) and a symlink loop (ELOOP) made std::filesystem throw.
  const std::string long_name = std::string(300, 'x') + "/s.yaml";
  std::filesystem::create_symlink("loop", dir.path() / "loop");
  for (const std::string& base : {long_name, std::string("loop/s.yaml")}) {
    SCOPED_TRACE(base);
    auto sweep = load_sweep(dir.write("sweep.yaml", "base: " + base + "\n"));
    ASSERT_FALSE(sweep.is_ok());
    EXPECT_EQ(sweep.status().code(), StatusCode::kNotFound);
    EXPECT_NE(sweep.status().message().find("sweep.yaml: base scenario "), std::string::npos)
        << sweep.status().message();
    EXPECT_NE(sweep.status().message().find("cannot open file ("), std::string::npos) << sweep.status().message();
  }
}

}  // namespace
}  // namespace omnilearn::scenarios
