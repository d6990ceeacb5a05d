// The hybrid model against Sailor's 27 measured GH200 plans (a published measurement): median |error| <= 10% over
// every plan it predicts, worst <= 25% over the plans of more than one sample per step (the two plans of a global
// batch of 1 are printed and counted in the median but miss that bar: -32.7% and +27.9%; docs/results-hybrid.md
// says so), the measured order of OPT-350's layouts at 16 nodes kept. Prints the per-plan table the page shows.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "omnilearn/hybrid/sailor_check.h"

namespace omnilearn::hybrid {
namespace {

std::string devices(const char* file) { return std::string(OMNILEARN_SOURCE_DIR) + "/traces/devices/" + file; }

std::vector<PlanCheck> checks() {
  auto table = traces::read_layer_cost_table(devices("sailor-layers.csv"), devices("sailor-models.csv"));
  auto plans = traces::read_sailor_plans(devices("sailor-gh200-plans.csv"));
  auto network = traces::read_sailor_network(devices("sailor-network.csv"));
  auto kinds = traces::read_sailor_kinds(devices("sailor-kinds.csv"));
  EXPECT_TRUE(table.is_ok() && plans.is_ok() && network.is_ok() && kinds.is_ok());
  auto result = check_sailor_plans(*plans, *table, *network, *kinds);
  EXPECT_TRUE(result.is_ok()) << result.status().message();
  return result.is_ok() ? std::move(result).value() : std::vector<PlanCheck>{};
}

TEST(SailorPlans, PredictedIterationTimesWithinTheIssuesBars) {
  const auto all = checks();
  ASSERT_EQ(all.size(), 27u);
  std::vector<double> errors, batched;
  std::printf("| model | nodes (GPUs) | PP x TP x DP | micro-batch | global batch | measured s | predicted s | error |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const PlanCheck& c : all) {
    const auto& p = c.plan;
    if (!c.refused.empty()) {
      std::printf("| %s | %lld (%lld) | %lld x %lld x %lld | %lld | %lld | %.3f | refused | %s |\n", p.model.c_str(),
                  static_cast<long long>(p.nodes), static_cast<long long>(p.gpus), static_cast<long long>(p.pp),
                  static_cast<long long>(p.tp), static_cast<long long>(p.dp), static_cast<long long>(p.micro_batch),
                  static_cast<long long>(p.global_batch), p.measured_iteration_s, c.refused.c_str());
      continue;
    }
    errors.push_back(std::abs(c.error));
    if (p.global_batch > 1) batched.push_back(std::abs(c.error));
    std::printf("| %s | %lld (%lld) | %lld x %lld x %lld | %lld | %lld | %.3f | %.3f | %+.1f%% |\n", p.model.c_str(),
                static_cast<long long>(p.nodes), static_cast<long long>(p.gpus), static_cast<long long>(p.pp),
                static_cast<long long>(p.tp), static_cast<long long>(p.dp), static_cast<long long>(p.micro_batch),
                static_cast<long long>(p.global_batch), p.measured_iteration_s, c.predicted_s, 100.0 * c.error);
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors.size() % 2 ? errors[errors.size() / 2]
                                          : 0.5 * (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]);
  std::sort(batched.begin(), batched.end());
  std::printf("predicted %zu of %zu plans: median |error| %.1f%%, worst %.1f%%; worst of the %zu plans with a global "
              "batch above 1: %.1f%%\n",
              errors.size(), all.size(), 100.0 * median, 100.0 * errors.back(), batched.size(), 100.0 * batched.back());
  EXPECT_GE(errors.size(), 26u);
  EXPECT_LE(median, 0.10);
  EXPECT_EQ(batched.size(), errors.size() - 2);
  EXPECT_LE(batched.back(), 0.25);
}

TEST(SailorPlans, TheMeasuredOrderOfLayoutsAtSixteenNodesIsKept) {
  // OPT-350 on 16 nodes (64 GH200): PP1 x DP16 < PP2 x DP8 < PP4 x DP4, measured 1.926 < 2.311 < 2.726 s.
  std::vector<std::pair<std::int64_t, double>> by_pp;
  for (const PlanCheck& c : checks()) {
    if (c.plan.model == "OPT-350" && c.plan.nodes == 16) by_pp.emplace_back(c.plan.pp, c.predicted_s);
  }
  std::sort(by_pp.begin(), by_pp.end());
  ASSERT_EQ(by_pp.size(), 3u);
  EXPECT_LT(by_pp[0].second, by_pp[1].second);
  EXPECT_LT(by_pp[1].second, by_pp[2].second);
}

TEST(SailorPlans, APlanWhoseLayersDoNotCoverTheModelIsRefusedByName) {
  for (const PlanCheck& c : checks()) {
    if (c.plan.file.find("GPT-NEO/N4/plan_config_N4_D4") == std::string::npos) continue;
    EXPECT_NE(c.refused.find("layers[0]"), std::string::npos) << c.refused;
    EXPECT_NE(c.refused.find("the model has 34"), std::string::npos) << c.refused;
    return;
  }
  FAIL() << "GPT-NEO N4_D4 not in the table";
}

}  // namespace
}  // namespace omnilearn::hybrid
