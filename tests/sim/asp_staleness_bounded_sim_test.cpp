// The staleness-bounded rule and batch policy in the simulator (time only), on the shipped 64-worker churn scenario
// (scenarios/edge/asp-64-fmnist-markov.yaml): the same seed gives the same bytes, every push is an update (nothing
// dropped), and the policy shrinks the slow workers' batches so that their pushes arrive less stale than with equal
// batches.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "omnilearn/scenarios/scenario_parser.h"
#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::read_csv;
using testing::read_text;
using testing::run_in_child;
using testing::test_dir;

// The shipped scenario, time only, one epoch; `policy` replaces its batch policy.
scenarios::Scenario churn_64(const std::string& policy = "staleness-bounded") {
  auto s = scenarios::load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/edge/asp-64-fmnist-markov.yaml",
                                    {"workload.numerics=time", "workload.epochs=1", "policy.name=" + policy});
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? *s : scenarios::Scenario{};
}

// Mean `column` of the iterations of workers [first, last) that started after `from_s`.
double mean_of(const std::vector<testing::CsvRow>& rows, const std::string& column, std::size_t first,
               std::size_t last, double from_s) {
  double sum = 0.0;
  int n = 0;
  for (const auto& r : rows) {
    const std::size_t k = std::stoul(r.at("worker"));
    if (k < first || k >= last || std::stod(r.at("start_s")) < from_s) continue;
    sum += std::stod(r.at(column));
    ++n;
  }
  EXPECT_GT(n, 0);
  return n > 0 ? sum / n : 0.0;
}

TEST(AspStalenessBoundedSim, SameSeedSameBytes) {
  const std::string a = test_dir("a"), b = test_dir("b");
  ASSERT_EQ(run_in_child(churn_64(), a), "");
  ASSERT_EQ(run_in_child(churn_64(), b), "");
  for (const char* file : {"iterations.csv", "plans.csv", "summary.json", "energy.csv", "availability.csv"}) {
    const std::string left = read_text(a + "/" + file);
    EXPECT_FALSE(left.empty()) << file;
    EXPECT_EQ(left, read_text(b + "/" + file)) << file;
  }
  // The churn is in the run: workers went down and back up.
  EXPECT_GT(read_csv(a + "/availability.csv").size(), 64u);
}

TEST(AspStalenessBoundedSim, KeepsEveryPushAndBoundsTheSlowWorkersStaleness) {
  const std::string bounded = test_dir("bounded"), equal = test_dir("uniform");
  ASSERT_EQ(run_in_child(churn_64(), bounded), "");
  ASSERT_EQ(run_in_child(churn_64("uniform"), equal), "");
  const auto rows = read_csv(bounded + "/iterations.csv");
  ASSERT_GT(rows.size(), 500u);
  // Nothing dropped: each push is the server's next update, 1, 2, ... (a dropped push would repeat a step).
  std::vector<bool> seen(rows.size() + 1, false);
  for (const auto& r : rows) {
    const auto step = std::stoul(r.at("step"));
    ASSERT_LE(step, rows.size());
    EXPECT_FALSE(seen[step]) << "step " << step << " twice";
    seen[step] = true;
  }
  // Workers 32-47 have 4 cores, 48-63 32 cores: once planned (here after 20 s), the slow ones compute batches of a
  // fraction of the fast ones' (equal compute times: 4/32 of them where the model is linear in the cores).
  const double from_s = 20.0;
  const double slow_batch = mean_of(rows, "batch", 32, 48, from_s), fast_batch = mean_of(rows, "batch", 48, 64, from_s);
  EXPECT_LT(slow_batch, 0.5 * fast_batch);
  EXPECT_GT(fast_batch, 16.0);
  // Their pushes arrive less stale than with equal batches (R = 64; equal batches: about 4 x 48 = 192).
  const double slow_bounded = mean_of(rows, "staleness", 32, 48, from_s);
  const double slow_equal = mean_of(read_csv(equal + "/iterations.csv"), "staleness", 32, 48, from_s);
  EXPECT_LT(slow_bounded, 0.6 * slow_equal);
  EXPECT_LT(slow_bounded, 1.5 * 64);
}

}  // namespace
}  // namespace omnilearn::sim
