// The pipeline testbed for real (docs/testbed.md, "A pipeline under cgroup quotas"): the 4-stage MLP of
// scenarios/hybrid/testbed-4stage.yaml at shares 0.5/0.5/0.25/0.5, then with layers moved off the slow stage, each
// for 20 measured steps. Needs cgroup write access and the worker program; skipped with the reason otherwise.
// Asserts that each run completes and leaves no cgroup, that moving the layers saves at least 20% and that the
// simulator's mean step, worst window and saving are within the bars widened by a tolerance derived here:
// three standard errors of the measured mean, plus how far the host's speed moved between the calibration and the
// steps: the prediction again at the CPU each pass paid in the steps (timeline.csv), against the calibrated one.
#include "omnilearn/emulator/pipeline_testbed.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "cgroup_skip.h"
#include "omnilearn/emulator/pipeline_prediction.h"

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

// The mean predicted step with each stage's forward and backward CPU taken from the run's measured steps (the mean
// of timeline.csv's cpu_s) instead of its calibration; the rest of the calibration as it was.
double predicted_at_run_cpu(const PipelineTestbedSpec& spec, const PipelineTestbedResult& r,
                            const std::filesystem::path& dir) {
  PipelineCalibration c = r.calibration;
  std::vector<double> sum(2 * c.forward_s.size(), 0.0), n(sum.size(), 0.0);
  std::ifstream f(dir / "timeline.csv");
  std::string line, rank, step, event;
  std::getline(f, line);  // rank,step,event,micro_batch,begin_s,end_s,cpu_s
  while (std::getline(f, line)) {
    std::stringstream in(line);
    std::getline(in, rank, ','), std::getline(in, step, ','), std::getline(in, event, ',');
    if (std::stoll(step) < spec.warmup_steps || (event != "forward" && event != "backward")) continue;
    const auto stage = std::stoul(rank) % c.forward_s.size();  // rank = replica x stages + stage
    const auto k = 2 * stage + (event == "backward" ? 1 : 0);
    sum[k] += std::stod(line.substr(line.rfind(',') + 1)), n[k] += 1.0;
  }
  for (std::size_t s = 0; s < c.forward_s.size(); ++s) {
    if (n[2 * s] > 0.0) c.forward_s[s] = sum[2 * s] / n[2 * s];
    if (n[2 * s + 1] > 0.0) c.backward_s[s] = sum[2 * s + 1] / n[2 * s + 1];
  }
  const auto steps = predict_pipeline_steps(spec, c);
  EXPECT_TRUE(steps.is_ok());
  double total = 0.0, count = 0.0;
  for (const auto& rec : steps.value()) {
    if (rec.step >= spec.warmup_steps) total += rec.step_s, count += 1.0;
  }
  return total / count;
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
  ASSERT_TRUE(std::filesystem::exists(out / "moved" / "timeline.csv"));

  // Stage 1 has the same 3 layers in both runs: how far its calibration moved is the host's repeatability.
  const double cal_a = a->calibration.forward_s[1] + a->calibration.backward_s[1];
  const double cal_b = b->calibration.forward_s[1] + b->calibration.backward_s[1];
  const double repeat = std::abs(cal_a - cal_b) / std::min(cal_a, cal_b);
  const double measured_saving = 1.0 - b->comparison.measured_mean_s / a->comparison.measured_mean_s;
  const double predicted_saving = 1.0 - b->comparison.predicted_mean_s / a->comparison.predicted_mean_s;
  // How far the host's speed moved between each run's calibration and its steps, as the prediction sees it.
  const double run_cpu_a = predicted_at_run_cpu(base, *a, out / "base");
  const double run_cpu_b = predicted_at_run_cpu(moved, *b, out / "moved");
  const double drift_a = std::abs(run_cpu_a / a->comparison.predicted_mean_s - 1.0);
  const double drift_b = std::abs(run_cpu_b / b->comparison.predicted_mean_s - 1.0);
  const double drift_saving = std::abs((1.0 - run_cpu_b / run_cpu_a) - predicted_saving);
  std::printf(
      "base: mean error %+.3f, worst window %+.3f; moved: %+.3f, %+.3f; saving measured %.3f, predicted %.3f; "
      "calibration repeat %.3f, 3 SE %.3f / %.3f; CPU drift %.3f / %.3f (saving %.3f); "
      "error at the run's CPU %+.3f / %+.3f\n",
      a->comparison.mean_error, a->comparison.worst_window_error, b->comparison.mean_error,
      b->comparison.worst_window_error, measured_saving, predicted_saving, repeat,
      standard_errors(*a, base.warmup_steps), standard_errors(*b, moved.warmup_steps), drift_a, drift_b, drift_saving,
      a->comparison.measured_mean_s / run_cpu_a - 1.0, b->comparison.measured_mean_s / run_cpu_b - 1.0);
  for (const auto& [r, drift] : {std::pair{&*a, drift_a}, std::pair{&*b, drift_b}}) {
    const double tol = standard_errors(*r, base.warmup_steps) + drift;
    EXPECT_LE(std::abs(r->comparison.mean_error), 0.05 + tol);
    EXPECT_LE(std::abs(r->comparison.worst_window_error), 0.10 + tol);
  }
  // The model alone: at the CPU the passes paid, the predicted mean step is within 5% and the noise of the measured.
  EXPECT_LE(std::abs(a->comparison.measured_mean_s / run_cpu_a - 1.0), 0.05 + standard_errors(*a, base.warmup_steps));
  EXPECT_LE(std::abs(b->comparison.measured_mean_s / run_cpu_b - 1.0), 0.05 + standard_errors(*b, moved.warmup_steps));
  EXPECT_GE(measured_saving, 0.20);
  EXPECT_LE(std::abs(measured_saving - predicted_saving), 0.05 + repeat + drift_saving);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace omnilearn::emulator
