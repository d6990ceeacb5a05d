// The paper's 4-worker heterogeneity levels (HL2: 12/12/8/16 cores, HL8: 6/6/4/32), ResNet18, B = 128, bounds
// 16..96: OmniLearn beats the uniform split and comes within 3% of the oracle, which no policy beats.
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

struct Level {
  const char* name;
  std::vector<int> cores;
};

class HeterogeneityLevel : public ::testing::TestWithParam<Level> {};

TEST_P(HeterogeneityLevel, OmnilearnBeatsUniformAndApproachesTheOracle) {
  std::map<std::string, double> total;
  for (const char* policy : {"uniform", "omnilearn", "oracle"}) {
    auto s = four_worker_scenario(GetParam().cores, policy);
    s.workload.dataset_samples = 128 * 300;  // 300 steps: the first decision's 5 uniform steps are amortised
    const std::string dir = test_dir(policy);
    ASSERT_EQ(run_in_child(s, dir), "") << policy;
    total[policy] = summary_number(dir, "total_time_s");
  }
  std::printf("%s: uniform %.3f s, omnilearn %.3f s, oracle %.3f s\n", GetParam().name, total["uniform"],
              total["omnilearn"], total["oracle"]);
  EXPECT_LT(total["omnilearn"], total["uniform"]);
  EXPECT_LE(total["oracle"], total["omnilearn"] * (1.0 + 1e-9));
  EXPECT_LE(total["omnilearn"], total["oracle"] * 1.03);
}

INSTANTIATE_TEST_SUITE_P(Paper, HeterogeneityLevel,
                         ::testing::Values(Level{"HL2", {12, 12, 8, 16}}, Level{"HL8", {6, 6, 4, 32}}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace omnilearn::sim
