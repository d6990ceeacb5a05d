#include "omnilearn/sim/iteration_cost_model.h"

#include <gtest/gtest.h>

namespace omnilearn::sim {
namespace {

std::vector<scenarios::NodeSpec> nodes(std::vector<double> speeds) {
  std::vector<scenarios::NodeSpec> out;
  for (double s : speeds) {
    scenarios::NodeSpec n;
    n.speed_flops = s;
    out.push_back(n);
  }
  return out;
}

TEST(IterationCostModel, FlopsAreAffineInTheBatch) {
  scenarios::ModelProfile m;
  m.parameters = 1000;
  m.flops_per_sample = 2e6;
  m.flops_per_iteration = 5e5;
  auto cost = IterationCostModel::create(m, nodes({1e9, 2e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_DOUBLE_EQ(cost->flops(0, 10), 5e5 + 10 * 2e6);
  EXPECT_DOUBLE_EQ(cost->seconds(1, 10), (5e5 + 10 * 2e6) / 2e9);
  EXPECT_DOUBLE_EQ(cost->seconds(1, 10, 0.5), (5e5 + 10 * 2e6) / 1e9);
  EXPECT_DOUBLE_EQ(cost->gradient_bytes(), 4000.0);  // 4 bytes per parameter by default
}

TEST(IterationCostModel, MeasuredLawIsConvertedAtEachNodesSpeed) {
  scenarios::ModelProfile m;
  m.gradient_bytes = 123;
  m.measured_fixed_s = 0.01;
  m.measured_per_sample_s = 0.002;
  auto cost = IterationCostModel::create(m, nodes({1e9, 4e9}));
  ASSERT_TRUE(cost) << cost.status().message();
  EXPECT_DOUBLE_EQ(cost->flops(0, 32), (0.01 + 32 * 0.002) * 1e9);
  EXPECT_DOUBLE_EQ(cost->flops(1, 32), (0.01 + 32 * 0.002) * 4e9);
  EXPECT_DOUBLE_EQ(cost->seconds(1, 32), 0.01 + 32 * 0.002);
  EXPECT_DOUBLE_EQ(cost->gradient_bytes(), 123.0);
}

TEST(IterationCostModel, MissingCostIsAnErrorNamingTheField) {
  scenarios::ModelProfile m;
  m.name = "empty";
  auto cost = IterationCostModel::create(m, nodes({1e9}));
  ASSERT_FALSE(cost);
  EXPECT_NE(cost.status().message().find("flops_per_sample"), std::string::npos) << cost.status().message();
}

}  // namespace
}  // namespace omnilearn::sim
