// ASP's update rules (emulator/worker/asp_update_rule.h) against updates worked out by hand on a two-element
// parameter: w = [1, 2], a pushed gradient g = [0.5, -1], step size η = 0.1, no momentum unless said. Each expected
// value is computed in the comment above its check.
#include "asp_update_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>


namespace omnilearn::emulator::worker {
namespace {

using scenarios::AspRule;

struct Server {
  std::vector<torch::Tensor> params{torch::tensor({1.0f, 2.0f}).requires_grad_(true)};
  torch::optim::SGD sgd;
  std::unique_ptr<AspServerRule> rule;
  explicit Server(const scenarios::AspSpec& spec, std::size_t workers = 2, double momentum = 0.0)
      : sgd(params, torch::optim::SGDOptions(0.1).momentum(momentum)),
        rule(make_asp_server_rule(spec, workers, /*b_ref=*/32.0)) {}

  void set(float a, float b) {
    torch::NoGradGuard ng;
    params[0].copy_(torch::tensor({a, b}));
  }
  // Pushes g = [0.5, -1] from worker k, τ stale, computed in t seconds, at η = 0.1.
  bool push(WorkerId k, std::int64_t staleness, double compute_s = 1.0) {
    params[0].mutable_grad() = torch::tensor({0.5f, -1.0f});
    return apply_gradient(*rule, sgd, params, AspPush{k, 32, staleness, compute_s}, 0.1);
  }
  void expect(double a, double b) const {
    EXPECT_NEAR(params[0][0].item<double>(), a, 1e-6);
    EXPECT_NEAR(params[0][1].item<double>(), b, 1e-6);
  }
};

scenarios::AspSpec rule(AspRule r) {
  scenarios::AspSpec s;
  s.rule = r;
  return s;
}

TEST(AspUpdateRule, AsgdStepsByTheGradient) {
  Server s(rule(AspRule::kAsgd));
  // w - η g = [1 - 0.1 x 0.5, 2 - 0.1 x (-1)] = [0.95, 2.1], however stale.
  EXPECT_TRUE(s.push(0, /*staleness=*/7));
  s.expect(0.95, 2.1);
}

TEST(AspUpdateRule, AsgdKeepsTheServersMomentum) {
  Server s(rule(AspRule::kAsgd), 2, /*momentum=*/0.9);
  // Step 1: m = g, w = [0.95, 2.1]. Step 2: m = 0.9 g + g = 1.9 g = [0.95, -1.9], w = [0.95 - 0.095, 2.1 + 0.19].
  s.push(0, 0);
  s.push(1, 0);
  s.expect(0.855, 2.29);
}

TEST(AspUpdateRule, SspStepsAsAsgd) {
  scenarios::AspSpec spec = rule(AspRule::kSsp);
  spec.staleness_bound = 1;
  Server s(spec);
  EXPECT_TRUE(s.push(0, 5));  // SSP's waiting is the schedule's (run::AspSchedule); the step is ASGD's
  s.expect(0.95, 2.1);
}

TEST(AspUpdateRule, StalenessAwareDividesTheStepByTheStaleness) {
  Server s(rule(AspRule::kStalenessAware));
  // τ = 4: η / 4 = 0.025; w = [1 - 0.025 x 0.5, 2 + 0.025] = [0.9875, 2.025].
  s.push(0, 4);
  s.expect(0.9875, 2.025);
  // τ = 0 counts as 1: the full step, [0.9875 - 0.05, 2.025 + 0.1] = [0.9375, 2.125].
  s.push(1, 0);
  s.expect(0.9375, 2.125);
}

TEST(AspUpdateRule, DcAsgdCompensatesTheDelay) {
  scenarios::AspSpec spec = rule(AspRule::kDcAsgd);
  spec.dc_lambda = 2.0;
  Server s(spec);
  // Worker 0 pulled w_0 = [0.5, 2.5]; the server has moved to w = [1, 2] since.
  s.set(0.5f, 2.5f);
  s.rule->pulled(0, s.params);
  s.set(1.0f, 2.0f);
  // w - w_0 = [0.5, -0.5]; g ⊙ g = [0.25, 1]; λ g ⊙ g ⊙ (w - w_0) = 2 x [0.125, -0.5] = [0.25, -1];
  // g + that = [0.75, -2]; w - η (...) = [1 - 0.075, 2 + 0.2] = [0.925, 2.2].
  s.push(0, 3);
  s.expect(0.925, 2.2);
  // Worker 1 pulls now, w = w_1: nothing to compensate, [0.925 - 0.05, 2.2 + 0.1] = [0.875, 2.3].
  s.rule->pulled(1, s.params);
  s.push(1, 0);
  s.expect(0.875, 2.3);
}

TEST(AspUpdateRule, RingmasterDropsAGradientMoreThanRStale) {
  scenarios::AspSpec spec = rule(AspRule::kRingmaster);
  spec.delay_threshold = 2;
  Server s(spec);
  // τ = 3 > R = 2: dropped, w stays [1, 2].
  EXPECT_FALSE(s.push(0, 3));
  s.expect(1.0, 2.0);
  // τ = 2 <= R: ASGD's step, [0.95, 2.1].
  EXPECT_TRUE(s.push(0, 2));
  s.expect(0.95, 2.1);
  spec.delay_threshold = scenarios::kNoDelayThreshold;  // R = inf: nothing is dropped
  Server never(spec);
  EXPECT_TRUE(never.push(0, 1000000));
  never.expect(0.95, 2.1);
}

TEST(AspUpdateRule, StalenessBoundedFactorScalesByBatchAndStaleness) {
  // (b_k / b_ref) min(1, R / τ), b_ref = 32, R = 8.
  EXPECT_DOUBLE_EQ(staleness_bounded_factor(32, 32.0, 0, 8), 1.0);
  EXPECT_DOUBLE_EQ(staleness_bounded_factor(8, 32.0, 8, 8), 0.25);     // within R: the batch's share only
  EXPECT_DOUBLE_EQ(staleness_bounded_factor(32, 32.0, 16, 8), 0.5);    // τ = 2R: half the step
  EXPECT_DOUBLE_EQ(staleness_bounded_factor(4, 32.0, 64, 8), 1.0 / 64);  // 4/32 x 8/64
  EXPECT_GT(staleness_bounded_factor(1, 32.0, 1000000, 1), 0.0);       // however stale, never dropped
}

TEST(AspUpdateRule, StalenessBoundedKeepsEveryPush) {
  scenarios::AspSpec spec = rule(AspRule::kStalenessBounded);
  spec.delay_threshold = 2;
  Server s(spec);
  // A full batch (32 = b_ref) within R = 2: ASGD's step, [0.95, 2.1].
  EXPECT_TRUE(s.push(0, 2));
  s.expect(0.95, 2.1);
  // τ = 8 = 4R, where Ringmaster would drop it: applied at a quarter of the step, η 0.025:
  // [0.95 - 0.0125, 2.1 + 0.025] = [0.9375, 2.125].
  EXPECT_TRUE(s.push(1, 8));
  s.expect(0.9375, 2.125);
  // A batch of 8 (a quarter of b_ref), τ = 1: η 0.025 again, [0.925, 2.15].
  s.params[0].mutable_grad() = torch::tensor({0.5f, -1.0f});
  EXPECT_TRUE(apply_gradient(*s.rule, s.sgd, s.params, AspPush{1, 8, 1, 1.0}, 0.1));
  s.expect(0.925, 2.15);
}

TEST(AspUpdateRule, RescaledScalesTheStepByTheComputeTime) {
  Server s(rule(AspRule::kRescaled));
  // Worker 0, t = 0.2: the only time known, mean 0.2, factor 1: [0.95, 2.1].
  s.push(0, 0, 0.2);
  s.expect(0.95, 2.1);
  // Worker 1, t = 0.6: mean (0.2 + 0.6) / 2 = 0.4, factor 1.5, η 0.15: [0.95 - 0.075, 2.1 + 0.15] = [0.875, 2.25].
  s.push(1, 0, 0.6);
  s.expect(0.875, 2.25);
  // Worker 0 again, t = 0.2: mean 0.4, factor 0.5, η 0.05: [0.875 - 0.025, 2.25 + 0.05] = [0.85, 2.3].
  s.push(0, 1, 0.2);
  s.expect(0.85, 2.3);
}

TEST(AspUpdateRule, OverwriteCopiesThePushedModel) {
  std::vector<torch::Tensor> params{torch::zeros({2}), torch::zeros({1, 2})};
  overwrite_parameters(params, torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_EQ(params[0][1].item<float>(), 2.0f);
  EXPECT_EQ(params[1][0][0].item<float>(), 3.0f);
  EXPECT_EQ(params[1][0][1].item<float>(), 4.0f);
}

TEST(AspUpdateRule, LocalSgdKeepsItsOwnMomentum) {
  LocalSgd sgd(0.9);
  torch::Tensor w = torch::tensor({1.0f, 2.0f});
  const torch::Tensor g = torch::tensor({0.5f, -1.0f});
  // As torch::optim::SGD: step 1 m = g, w = [0.95, 2.1]; step 2 m = 1.9 g, w = [0.855, 2.29].
  sgd.step(w, g, 0.1);
  sgd.step(w, g, 0.1);
  EXPECT_NEAR(w[0].item<double>(), 0.855, 1e-6);
  EXPECT_NEAR(w[1].item<double>(), 2.29, 1e-6);
  EXPECT_EQ(sgd.steps(), 2);
  // A pull replaces the parameters, not the momentum: step 3 from w = [0, 0], m = 0.9 x 1.9 g + g = 2.71 g,
  // w = -0.1 x 2.71 x [0.5, -1] = [-0.1355, 0.271].
  w = torch::zeros({2});
  sgd.step(w, g, 0.1);
  EXPECT_NEAR(w[0].item<double>(), -0.1355, 1e-6);
  EXPECT_NEAR(w[1].item<double>(), 0.271, 1e-6);
}

TEST(AspUpdateRule, StepSizeScalesByBatchAndWarmUp) {
  scenarios::EmulatorSpec s;
  s.learning_rate = 0.05;
  EXPECT_DOUBLE_EQ(asp_step_size(s, 48, 32.0, 1), 0.05);
  s.lr_scaling = true;
  // Linear: 0.05 x 48 / 32 = 0.075; with a 10-update warm-up, at update 5: x 0.5 = 0.0375.
  EXPECT_NEAR(asp_step_size(s, 48, 32.0, 1), 0.075, 1e-12);
  s.warmup_updates = 10;
  EXPECT_NEAR(asp_step_size(s, 48, 32.0, 5), 0.0375, 1e-12);
  // Square root: 0.05 x sqrt(128 / 32) = 0.1 (past the warm-up).
  s.lr_scaling_rule = scenarios::LrScalingRule::kSqrt;
  EXPECT_NEAR(asp_step_size(s, 128, 32.0, 20), 0.1, 1e-12);
}

}  // namespace
}  // namespace omnilearn::emulator::worker
