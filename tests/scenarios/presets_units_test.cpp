#include <gtest/gtest.h>

#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/scenarios/model_catalog.h"
#include "omnilearn/scenarios/quantity_parser.h"

namespace omnilearn::scenarios {
namespace {

struct QuantityCase {
  const char* text;
  std::optional<double> expected;
};

TEST(QuantityParser, Bandwidths) {
  const QuantityCase cases[] = {
      {"1.25e9", 1.25e9},  {"10Gbps", 1.25e9},   {"10 Gbps", 1.25e9}, {"10Gb/s", 1.25e9},  {"10GBps", 1e10},
      {"10GB/s", 1e10},    {"100Mbps", 1.25e7},  {"1Kbps", 125.0},    {"1kbps", 125.0},    {"8bps", 1.0},
      {"3Bps", 3.0},       {"2KBps", 2e3},       {"1MBps", 1e6},      {"1Tbps", 1.25e11},  {"10Gbs", std::nullopt},
      {"10 gbps", std::nullopt}, {"fast", std::nullopt}, {"-1Gbps", std::nullopt}, {"", std::nullopt},
      {"10Xbps", std::nullopt},  {"inf", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto got = parse_bandwidth_Bps(c.text);
    ASSERT_EQ(got.has_value(), c.expected.has_value());
    if (got) {
      EXPECT_DOUBLE_EQ(*got, *c.expected);
    }
  }
}

TEST(QuantityParser, Durations) {
  const QuantityCase cases[] = {
      {"1", 1.0},        {"1.5s", 1.5},       {"20ms", 0.02},          {"50us", 50e-6},     {"50\xC2\xB5s", 50e-6},
      {"7ns", 7e-9},     {"2min", 120.0},     {"1h", 3600.0},          {"0", 0.0},          {" 3 s ", 3.0},
      {"1d", std::nullopt}, {"-1s", std::nullopt}, {"ms", std::nullopt}, {"1e400", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto got = parse_duration_s(c.text);
    ASSERT_EQ(got.has_value(), c.expected.has_value());
    if (got) {
      EXPECT_DOUBLE_EQ(*got, *c.expected);
    }
  }
}

TEST(QuantityParser, SimGridSpeeds) {
  const QuantityCase cases[] = {
      {"98.095Mf", 98.095e6}, {"1Tf", 1e12},         {"500Gf", 5e11},       {"2 Gflops", 2e9},
      {"3kf", 3e3},           {"3Kf", 3e3},          {"1Pf", 1e15},         {"7f", 7.0},
      {"7flops", 7.0},        {"1e9", 1e9},          {"1Yf", 1e24},         {"0Gf", std::nullopt},
      {"-1Gf", std::nullopt}, {"1Gb", std::nullopt}, {"1Xf", std::nullopt}, {"1GGf", std::nullopt},
      {"Gf", std::nullopt},   {"", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto got = parse_speed_flops(c.text);
    ASSERT_EQ(got.has_value(), c.expected.has_value());
    if (got) {
      EXPECT_DOUBLE_EQ(*got, *c.expected);
    }
  }
}

TEST(QuantityParser, PlainNumbers) {
  EXPECT_EQ(parse_number("12"), 12.0);
  EXPECT_EQ(parse_number("-3.5"), -3.5);
  EXPECT_EQ(parse_number("+1e9"), 1e9);
  EXPECT_FALSE(parse_number("12abc"));
  EXPECT_FALSE(parse_number("nan"));
  EXPECT_FALSE(parse_number("0x10"));
}

TEST(ClusterPreset, CloudMixesVmSizesDeterministically) {
  auto a = make_cluster_preset("cloud", 8);
  auto b = make_cluster_preset("cloud", 8);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_EQ(a->workers.size(), 8u);
  const int expected_cores[] = {2, 4, 8, 16, 2, 4, 8, 16};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(a->workers[i].cores, expected_cores[i]);
    EXPECT_EQ(a->workers[i].name, "w" + std::to_string(i));
    EXPECT_EQ(a->workers[i].speed_flops, b->workers[i].speed_flops);
    EXPECT_GE(a->workers[i].bandwidth_Bps, 10e9 / 8);
    EXPECT_LE(a->workers[i].bandwidth_Bps, 25e9 / 8);
    EXPECT_DOUBLE_EQ(a->workers[i].latency_s, 50e-6);
  }
  EXPECT_EQ(a->preset, "cloud");
}

TEST(ClusterPreset, EdgeAndHpcRanges) {
  auto edge = make_cluster_preset("edge", 5);
  ASSERT_TRUE(edge.is_ok());
  for (const auto& n : edge->workers) {
    EXPECT_GE(n.bandwidth_Bps, 20e6 / 8);
    EXPECT_LE(n.bandwidth_Bps, 100e6 / 8);
    EXPECT_GE(n.latency_s, 5e-3);
    EXPECT_LE(n.latency_s, 20e-3);
    EXPECT_LE(n.speed_flops, 2e10);
  }
  auto hpc = make_cluster_preset("hpc", 3);
  ASSERT_TRUE(hpc.is_ok());
  for (const auto& n : hpc->workers) {
    EXPECT_GE(n.speed_flops, 1e13);
    EXPECT_LE(n.speed_flops, 1e14);
    EXPECT_TRUE(n.gpu);
    EXPECT_GE(n.bandwidth_Bps, 100e9 / 8);
    EXPECT_DOUBLE_EQ(n.latency_s, 1e-6);
  }
}

TEST(ClusterPreset, UnknownPresetListsKnownOnes) {
  auto r = make_cluster_preset("mainframe", 2);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("edge, cloud, hpc"), std::string::npos) << r.status().message();
  EXPECT_FALSE(make_cluster_preset("cloud", 0).is_ok());
}

TEST(ModelCatalog, ProfilesFollowTheFormulas) {
  auto r18 = find_model("resnet18", /*small_images=*/true);
  ASSERT_TRUE(r18);
  EXPECT_DOUBLE_EQ(r18->parameters, 11.7e6);
  EXPECT_DOUBLE_EQ(r18->gradient_bytes, 4 * 11.7e6);
  EXPECT_NEAR(r18->flops_per_sample, 1.68e9, 1e6);
  auto r50 = find_model("resnet50", /*small_images=*/false);
  ASSERT_TRUE(r50);
  EXPECT_NEAR(r50->flops_per_sample, 3 * 4.1e9, 1e6);
  auto gpt2 = find_model("gpt2", true);
  ASSERT_TRUE(gpt2);
  EXPECT_NEAR(gpt2->flops_per_sample, 3 * 2 * 124e6 * 1024, 1e6);
  EXPECT_FALSE(find_model("bert", true));
  EXPECT_EQ(find_dataset("places365")->samples, 1800000);
  EXPECT_EQ(find_dataset("food101")->samples, 75750);
  EXPECT_FALSE(find_dataset("imagenet"));
  EXPECT_EQ(model_names().size(), 5u);
}

}  // namespace
}  // namespace omnilearn::scenarios
