#include "omnilearn/scenarios/sweep.h"

#include <gtest/gtest.h>

#include "omnilearn/scenarios/scenario_parser.h"
#include "temp_dir.h"

namespace omnilearn::scenarios {
namespace {

using testing::TempDir;

constexpr const char* kBase =
    "cluster:\n"
    "  nodes:\n"
    "    - {name: a, cores: 4, core_speed: 1e9}\n"
    "    - {name: b, cores: 4, core_speed: 1e9}\n"
    "workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1}\n"
    "policy: {name: uniform, min_batch: 8, max_batch: 56}\n";

TEST(Sweep, CartesianProductFirstAxisSlowest) {
  TempDir tmp;
  tmp.write("scen/base.yaml", kBase);
  const std::string path = tmp.write(
      "sweeps/s.yaml",
      "name: study\n"
      "base: ../scen/base.yaml\n"
      "set: {workload.epochs: 2}\n"
      "axes:\n"
      "  policy.name: [uniform, omnilearn, oracle]\n"
      "  level:\n"
      "    hl1:\n"
      "      cluster.nodes[0].cores: 4\n"  // (a key with [ ] must be in block style or quoted)
      "      availability.schedule.phases: [{at: 0, cores: [4, 4]}]\n"
      "    hl2: {availability.schedule.phases: [{at: 0, cores: [2, 4]}]}\n");
  auto sweep = load_sweep(path);
  ASSERT_TRUE(sweep.is_ok()) << sweep.status().message();
  EXPECT_EQ(sweep->name, "study");
  ASSERT_EQ(sweep->bases.size(), 1u);
  EXPECT_EQ(sweep->bases[0].path, (tmp.path() / "scen/base.yaml").string());
  ASSERT_EQ(sweep->axes.size(), 2u);
  EXPECT_EQ(sweep->axes[1].name, "level");

  const std::vector<SweepPoint> points = expand(*sweep);
  ASSERT_EQ(points.size(), 6u);
  const char* names[] = {"study-uniform-hl1",   "study-uniform-hl2", "study-omnilearn-hl1",
                         "study-omnilearn-hl2", "study-oracle-hl1",  "study-oracle-hl2"};
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].index, i);
    EXPECT_EQ(points[i].name, names[i]);
    EXPECT_EQ(points[i].base_path, sweep->bases[0].path);
  }
  EXPECT_EQ(points[3].overrides,
            (std::vector<std::string>{"workload.epochs=2", "policy.name=omnilearn",
                                      "availability.schedule.phases=[{at: 0, cores: [2, 4]}]"}));
  EXPECT_EQ(points[0].overrides.size(), 4u);  // set + policy + the two keys of hl1
  EXPECT_EQ(points[3].coordinates,
            (std::vector<std::pair<std::string, std::string>>{{"policy.name", "omnilearn"}, {"level", "hl2"}}));

  auto scenario = load_scenario(points[3].base_path, points[3].overrides);
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  EXPECT_EQ(scenario->policy.name, "omnilearn");
  EXPECT_EQ(scenario->workload.epochs, 2);
  EXPECT_DOUBLE_EQ(scenario->availability.phases[0].fractions[0], 0.5);
}

TEST(Sweep, NamedBasesAreTheSlowestAxisAndLabelsNameValues) {
  TempDir tmp;
  tmp.write("one.yaml", kBase);
  tmp.write("two.yaml", kBase);
  const std::string path = tmp.write("sweep-x.yaml",
                                     "bases: {first: one.yaml, second: two.yaml}\n"
                                     "axes:\n"
                                     "  availability.schedule.phases:\n"
                                     "    - [{at: 0, fractions: [1, 1]}]\n"
                                     "    - [{at: 0, fractions: [1, 0.5]}]\n"
                                     "  seed: [1, 2]\n"
                                     "labels: {availability.schedule.phases: [even, 'half/b']}\n");
  auto sweep = load_sweep(path);
  ASSERT_TRUE(sweep.is_ok()) << sweep.status().message();
  const auto points = expand(*sweep);
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points[0].name, "sweep-x-first-even-1");
  EXPECT_EQ(points[3].name, "sweep-x-first-half_b-2");  // labels are made filesystem-safe
  EXPECT_EQ(points[4].name, "sweep-x-second-even-1");
  EXPECT_EQ(points[4].base_path, (tmp.path() / "two.yaml").string());
  EXPECT_EQ(points[4].coordinates,
            (std::vector<std::pair<std::string, std::string>>{
                {"base", "second"}, {"availability.schedule.phases", "even"}, {"seed", "1"}}));
  // Without labels, non-scalar values are named by position.
  const std::string unlabeled =
      tmp.write("u.yaml", "base: one.yaml\naxes: {availability.schedule.phases: [[{at: 0, fractions: [1, 1]}]]}\n");
  auto u = load_sweep(unlabeled);
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  EXPECT_EQ(expand(*u).at(0).name, "u-v0");
  EXPECT_EQ(expand(*u).at(0).coordinates.size(), 1u);  // a single base is not a coordinate
}

TEST(Sweep, ErrorsNameTheSweepFileOrThePoint) {
  TempDir tmp;
  tmp.write("base.yaml", kBase);
  struct Case {
    const char* yaml;
    const char* expected;
  };
  const Case cases[] = {
      {"base: base.yaml\naxis: {seed: [1]}\n", "s.yaml:2: axis: unknown key"},
      {"axes: {seed: [1]}\n", "s.yaml:1: (top level): expected one of base, bases"},
      {"base: base.yaml\naxes:\n  seed: 3\n", "s.yaml:3: axes.seed: expected a non-empty list of values"},
      {"base: base.yaml\naxes:\n  policy.name: [uniform, uniform]\n", "axes.policy.name: label 'uniform' is used twice"},
      {"base: missing.yaml\n", "missing.yaml: cannot open file"},
      {"base: base.yaml\naxes: {seed: [1, 2]}\nlabels: {seed: [one]}\n", "labels.seed: expected 2 labels"},
      {"base: base.yaml\naxes: {seed: [1]}\nlabels: {sed: [one]}\n", "labels.sed: no axis of that name"},
      {"base: base.yaml\naxes:\n  lvl: {a: 3}\n", "s.yaml:3: axes.lvl.a: expected a mapping of key: value overrides"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    const std::string path = tmp.write("s.yaml", c.yaml);
    auto r = load_sweep(path);
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status().message();
  }
  auto with_bad_point = load_sweep(tmp.write("s.yaml", "base: base.yaml\naxes: {policy.name: [uniform, bogus]}\n"));
  ASSERT_TRUE(with_bad_point.is_ok()) << with_bad_point.status().message();
  const auto points = expand(*with_bad_point);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_TRUE(check_point(*with_bad_point, points[0]).is_ok());
  const Status bad_point = check_point(*with_bad_point, points[1]);
  ASSERT_FALSE(bad_point.is_ok());
  EXPECT_NE(bad_point.message().find("point 's-bogus'"), std::string::npos) << bad_point.message();
  EXPECT_NE(bad_point.message().find("(--set policy.name=bogus): policy.name: unknown policy 'bogus'"),
            std::string::npos)
      << bad_point.message();
}

TEST(Sweep, PaperSweepsExpandToSixteenPoints) {
  for (const char* file : {"sweep-bsp-levels.yaml", "sweep-asp-levels.yaml"}) {
    SCOPED_TRACE(file);
    auto sweep = load_sweep(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/paper/" + file);
    ASSERT_TRUE(sweep.is_ok()) << sweep.status().message();
    const auto points = expand(*sweep);
    ASSERT_EQ(points.size(), 16u);
    const std::string prefix = std::string(file).substr(0, std::string(file).size() - 5);
    EXPECT_EQ(points.front().name, prefix + "-hl1-uniform");
    EXPECT_EQ(points[1].name, prefix + "-hl1-omnilearn");
    EXPECT_EQ(points.back().name, prefix + "-hl8-oracle");
  }
}

}  // namespace
}  // namespace omnilearn::scenarios
