// The pipeline testbed for real (docs/testbed.md, "A pipeline under cgroup quotas"): the 4-stage MLP of
// scenarios/hybrid/testbed-4stage.yaml at shares 0.5/0.5/0.25/0.5, then with layers moved off the slow stage, each
// for 20 measured steps. Needs cgroup write access and the worker program; skipped with the reason otherwise.
// Asserts that each run completes and leaves no cgroup, that moving the layers saves at least 20% and that the
// simulator's mean step, worst window and saving are within the bars widened by a tolerance derived here:
// three standard errors of the measured mean, plus how far the same stage's calibration moved between the two runs
// (the prediction cannot be closer than the host repeats its own speed).
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "cgroup_skip.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::emulator {
namespace {

PipelineTestbedSpec four_stage_spec(std::vector<std::int64_t> layers, const std::string& name) {
  PipelineTestbedSpec s;  // as scenarios/hybrid/testbed-4stage.yaml
  s.name = name;
  s.widths.assign(12, 512);
  s.widths.push_back(10);
  s.layers_per_stage = std::move(layers);
  s.shares = {0.5, 0.5, 0.25, 0.5};
  s.micro_batch_size = 16;
  s.micro_batches = 8;
  s.steps = 20;
  s.warmup_steps = 3;
  s.cpu_period_s = 0.02;
  return s;
}

// Three standard errors of the measured mean step, relative to it.
double standard_errors(const PipelineTestbedResult& r, std::int64_t warmup) {
  std::vector<double> v;
  for (const auto& s : r.measured) {
    if (s.step >= warmup) v.push_back(s.step_s);
  }
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0.0;
  for (const double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  return 3.0 * std::sqrt(var / static_cast<double>(v.size())) / mean;
}

bool run_cgroups_left() {
  const std::string mine = "-p" + std::to_string(::getpid()) + "-";
  for (const char* root : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with("omnilearn-") && name.find(mine) != std::string::npos) return true;
    }
  }
  return false;
}

TEST(PipelineTestbed, FourStagesAndTheLayerMove) {
  SKIP_WITHOUT_CGROUPS();
  if (host_cpu_count() < 2) GTEST_SKIP() << "needs 2 CPUs (the shares sum to 1.75 cores)";
  const auto out = std::filesystem::temp_directory_path() / ("pipeline-testbed-" + std::to_string(::getpid()));
  PipelineLaunchOptions options;
  options.environment = std::make_shared<HostLaunchEnvironment>(OMNILEARN_WORKER);
  const PipelineTestbedSpec base = four_stage_spec({3, 3, 3, 3}, "pipe-test-base");
  const PipelineTestbedSpec moved = four_stage_spec({4, 3, 1, 4}, "pipe-test-moved");
  auto a = run_pipeline_testbed(base, (out / "base").string(), options);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_EQ(a->exit_code, 0) << a->message;
  auto b = run_pipeline_testbed(moved, (out / "moved").string(), options);
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  ASSERT_EQ(b->exit_code, 0) << b->message;
  EXPECT_FALSE(run_cgroups_left());
  EXPECT_TRUE(std::filesystem::exists(out / "base" / "validation.json"));
  EXPECT_TRUE(std::filesystem::exists(out / "base" / "timeline.csv"));

  // Stage 1 has the same 3 layers in both runs: how far its calibration moved is the host's repeatability.
  const double cal_a = a->calibration.forward_s[1] + a->calibration.backward_s[1];
  const double cal_b = b->calibration.forward_s[1] + b->calibration.backward_s[1];
  const double repeat = std::abs(cal_a - cal_b) / std::min(cal_a, cal_b);
  const double measured_saving = 1.0 - b->comparison.measured_mean_s / a->comparison.measured_mean_s;
  const double predicted_saving = 1.0 - b->comparison.predicted_mean_s / a->comparison.predicted_mean_s;
  std::printf("base: mean error %+.3f, worst window %+.3f; moved: %+.3f, %+.3f; saving measured %.3f, predicted %.3f; "
              "calibration repeat %.3f, 3 SE %.3f / %.3f\n",
              a->comparison.mean_error, a->comparison.worst_window_error, b->comparison.mean_error,
              b->comparison.worst_window_error, measured_saving, predicted_saving, repeat,
              standard_errors(*a, base.warmup_steps), standard_errors(*b, moved.warmup_steps));
  for (const auto* r : {&*a, &*b}) {
    const double tol = standard_errors(*r, base.warmup_steps) + repeat;
    EXPECT_LE(std::abs(r->comparison.mean_error), 0.05 + tol);
    EXPECT_LE(std::abs(r->comparison.worst_window_error), 0.10 + tol);
  }
  EXPECT_GE(measured_saving, 0.20);
  EXPECT_LE(std::abs(measured_saving - predicted_saving), 0.05 + repeat);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace omnilearn::emulator
