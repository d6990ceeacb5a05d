// Device clusters: the shipped presets hold the anchors' device counts and name only kinds of the shipped device
// table; a hand-written file reads back; bad fields are refused with file:line and the field.
#include "omnilearn/scenarios/device_cluster.h"

#include <gtest/gtest.h>

#include <string>

namespace omnilearn::scenarios {
namespace {

const std::string kSource = OMNILEARN_SOURCE_DIR;

TEST(DeviceClusterTest, PresetsHoldTheAnchorsClusters) {
  auto speeds = traces::read_device_speed_table(kSource + "/traces/devices/device-kinds.csv",
                                                kSource + "/traces/devices/device-speeds.csv");
  ASSERT_TRUE(speeds.is_ok()) << speeds.status().message();
  const struct {
    const char* name;
    std::int64_t gpus;
    std::vector<std::pair<const char*, std::int64_t>> by_kind;
  } presets[] = {
      {"gavel", 108, {{"v100", 36}, {"p100", 36}, {"k80", 36}}},
      {"sia", 64, {{"t4", 24}, {"a100", 16}, {"rtx2080ti", 24}}},
      {"pollux", 64, {{"t4", 64}}},
  };
  ASSERT_EQ(device_cluster_preset_names().size(), std::size(presets));
  for (const auto& p : presets) {
    SCOPED_TRACE(p.name);
    auto file = device_cluster_preset_file(p.name, kSource);
    ASSERT_TRUE(file.is_ok());
    auto c = load_device_cluster(*file);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    EXPECT_EQ(c->name, p.name);
    EXPECT_EQ(c->gpus(), p.gpus);
    for (const auto& [kind, n] : p.by_kind) EXPECT_EQ(c->gpus_of(kind), n) << kind;
    const Status kinds = check_device_kinds(*c, *speeds);
    EXPECT_TRUE(kinds.is_ok()) << kinds.message();
  }
  auto pollux = load_device_cluster(*device_cluster_preset_file("pollux", kSource));
  ASSERT_TRUE(pollux.is_ok());
  EXPECT_EQ(pollux->groups[0].gpus_per_node, 4);
  EXPECT_EQ(pollux->groups[0].bandwidth_Bps, 50e9 / 8);
  EXPECT_FALSE(device_cluster_preset_file("philly", kSource).is_ok());
}

TEST(DeviceClusterTest, RefusesBadFieldsWithFileLineAndField) {
  const struct {
    const char* yaml;
    const char* expected;
  } cases[] = {
      {"name: x\ngroups:\n  - {device: t4, nodes: 0, gpus_per_node: 4}\n", "c.yaml:3: groups[0].nodes"},
      {"name: x\ngroups:\n  - {device: t4, nodes: 2}\n", "c.yaml:3: groups[0].gpus_per_node"},
      {"name: x\ngroups:\n  - {device: t4, nodes: 2, gpus_per_node: 4, bandwidth: fast}\n",
       "c.yaml:3: groups[0].bandwidth"},
      {"name: x\ngroups:\n  - {device: t4, nodes: 2, gpus_per_node: 4, colour: red}\n", "c.yaml:3: groups[0]"},
      {"name: x\ngroups: []\n", "c.yaml:2: groups"},
      {"groups:\n  - {device: t4, nodes: 2, gpus_per_node: 4}\n", "c.yaml:1: name"},
  };
  for (const auto& c : cases) {
    auto r = parse_device_cluster(c.yaml, "c.yaml");
    ASSERT_FALSE(r.is_ok()) << c.yaml;
    EXPECT_EQ(r.status().message().rfind(c.expected, 0), 0u) << r.status().message();
  }
  auto ok = parse_device_cluster("name: x\ngroups:\n  - {device: h100, nodes: 2, gpus_per_node: 8}\n", "c.yaml");
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->gpus(), 16);
  EXPECT_FALSE(ok->groups[0].bandwidth_Bps.has_value());
  auto speeds = traces::DeviceSpeedTable::create({{"t4", 8.1, 16, ""}}, {});
  ASSERT_TRUE(speeds.is_ok());
  const Status unknown = check_device_kinds(*ok, *speeds);
  EXPECT_EQ(unknown.message(),
            "cluster 'x': groups[0].device 'h100' is not a kind of the device table (expected one of: t4)");
}

}  // namespace
}  // namespace omnilearn::scenarios
