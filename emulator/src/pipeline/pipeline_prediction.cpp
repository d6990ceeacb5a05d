#include "omnilearn/emulator/pipeline_prediction.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "omnilearn/controller/policy_registry.h"

namespace omnilearn::emulator {
namespace {

std::size_t at(const PipelineTestbedSpec& spec, std::int64_t replica, std::int64_t stage) {
  return static_cast<std::size_t>(replica * spec.stages + stage);
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// One step from `origin_s`: each replica's pipeline by run_pipeline, its passes timed by their stages' quotas; each
// stage all-reduces over its replicas once the last of them has finished (replicas > 1), then updates under its
// quota; the closing sync waits for the last stage.
Result<PipelineStepRecord> predict_step(const PipelineTestbedSpec& spec, const PipelineCalibration& calibration,
                                        const std::vector<hybrid::ReplicaTimes>& times, std::vector<StageQuota>& quotas,
                                        const std::vector<BatchSize>& plan, Seconds origin_s) {
  PipelineStepRecord rec;
  rec.micro_batches = plan;
  std::vector<double> stage_end(static_cast<std::size_t>(spec.stages), 0.0);
  for (std::int64_t r = 0; r < spec.replicas; ++r) {
    const hybrid::PassClock clock = [&, r](std::size_t stage, Seconds start_s, Seconds cpu_s) {
      return quotas[at(spec, r, static_cast<std::int64_t>(stage))].run(origin_s + start_s, cpu_s) - origin_s;
    };
    const std::int64_t m = rec.micro_batches[static_cast<std::size_t>(r)];
    auto run = hybrid::run_pipeline(spec.schedule, m, times[static_cast<std::size_t>(r)], /*keep_ops=*/false, clock);
    if (!run) return run.status().with_context("replica " + std::to_string(r));
    rec.replica_s.push_back(run->makespan_s);
    for (std::int64_t s = 0; s < spec.stages; ++s) {
      const double end = run->stages[static_cast<std::size_t>(s)].last_end_s;
      stage_end[static_cast<std::size_t>(s)] = std::max(stage_end[static_cast<std::size_t>(s)], end);
    }
  }
  double end = 0.0;
  for (std::int64_t r = 0; r < spec.replicas; ++r) {
    for (std::int64_t s = 0; s < spec.stages; ++s) {
      const double ready = stage_end[static_cast<std::size_t>(s)] + (spec.replicas > 1 ? calibration.allreduce_s : 0.0);
      const double update = calibration.update_s.empty() ? 0.0 : calibration.update_s[at(spec, r, s)];
      end = std::max(end, quotas[at(spec, r, s)].run(origin_s + ready, update) - origin_s);
    }
  }
  rec.step_s = end + calibration.sync_s;
  return rec;
}

}  // namespace

Seconds StageQuota::run(Seconds start_s, Seconds cpu_s) {
  constexpr double kEpsilon = 1e-12;
  Seconds t = start_s;
  while (cpu_s > kEpsilon) {
    const auto k = static_cast<std::int64_t>(std::floor((t + kEpsilon) / period_s_));
    if (k != period_) period_ = k, used_s_ = 0.0;
    const Seconds period_end = static_cast<double>(k + 1) * period_s_;
    const Seconds run = std::min({cpu_s, quota_s_ - used_s_, period_end - t});
    if (run <= kEpsilon) {  // this period's quota is spent: throttled until the next
      t = period_end;
      continue;
    }
    t += run, cpu_s -= run, used_s_ += run;
  }
  return t;
}

Result<controller::Controller> make_pipeline_controller(const PipelineTestbedSpec& spec) {
  controller::ControllerOptions o;
  o.mode = controller::TrainingMode::kBsp;
  o.global_batch = spec.micro_batches;
  for (std::int64_t r = 0; r < spec.replicas; ++r) {
    // Every replica keeps at least one micro-batch: a replica without any would have no step time to report.
    o.workers.push_back({/*lo=*/1, /*hi=*/spec.micro_batches - (spec.replicas - 1), /*nominal_capacity=*/1.0});
  }
  o.dead_band = spec.controller.dead_band;
  o.ewma_alpha = spec.controller.ewma_alpha;
  o.every_n = spec.controller.every_n;
  o.memory_guard = false;  // no device memory here: a slower step after a larger batch is the pipeline's bubble
  auto policy = controller::make_default_registry().make(spec.controller.policy, controller::PolicyOptions{});
  if (!policy) return policy.status().with_context("controller.policy");
  return controller::Controller::create(std::move(o), std::move(policy).value());
}

Result<hybrid::ReplicaTimes> calibrated_replica_times(const PipelineTestbedSpec& spec,
                                                      const PipelineCalibration& calibration, std::int64_t replica) {
  const std::size_t n = static_cast<std::size_t>(spec.replicas * spec.stages);
  if (calibration.forward_s.size() != n || calibration.backward_s.size() != n) {
    return Status::invalid_argument("calibration: " + std::to_string(n) + " forward and backward times expected");
  }
  hybrid::ReplicaTimes t;
  for (std::int64_t s = 0; s < spec.stages; ++s) {
    t.forward_s.push_back(calibration.forward_s[at(spec, replica, s)]);
    t.backward_s.push_back(calibration.backward_s[at(spec, replica, s)]);
  }
  t.send_forward_s = calibration.send_forward_s;
  t.send_backward_s = calibration.send_backward_s;
  return t;
}

Result<std::vector<PipelineStepRecord>> predict_pipeline_steps(const PipelineTestbedSpec& spec,
                                                               const PipelineCalibration& calibration) {
  auto control = make_pipeline_controller(spec);
  if (!control) return control.status();
  std::vector<hybrid::ReplicaTimes> times;
  std::vector<StageQuota> quotas;  // at(spec, replica, stage), carried from step to step
  for (std::int64_t r = 0; r < spec.replicas; ++r) {
    auto t = calibrated_replica_times(spec, calibration, r);
    if (!t) return t.status();
    times.push_back(std::move(t).value());
    for (std::int64_t s = 0; s < spec.stages; ++s) quotas.emplace_back(stage_share(spec, r, s), spec.cpu_period_s);
  }
  std::vector<PipelineStepRecord> steps;
  Seconds origin_s = 0.0;  // the step's start on the quotas' clock
  for (std::int64_t step = 0; step < spec.warmup_steps + spec.steps; ++step) {
    auto rec = predict_step(spec, calibration, times, quotas, control->current_plan().batch, origin_s);
    if (!rec) return rec.status();
    rec->step = step;
    origin_s += rec->step_s;
    for (std::int64_t r = 0; r < spec.replicas; ++r) {
      const auto k = static_cast<std::size_t>(r);
      OMNI_RETURN_IF_ERROR(control->report(controller::IterationDone{static_cast<WorkerId>(r), step, static_cast<double>(step),
                                                                     rec->replica_s[k], rec->micro_batches[k]}));
    }
    auto plan = control->plan_next({step + 1, 0, static_cast<double>(step + 1)});
    if (!plan) return plan.status();
    steps.push_back(std::move(rec).value());
  }
  return steps;
}

PipelineVerdict judge_pipeline(const PipelineComparison& c, const PipelineBars& bars) {
  PipelineVerdict v;
  v.mean_ok = std::abs(c.mean_error) <= bars.mean_error;
  v.window_ok = std::abs(c.worst_window_error) <= bars.window_error;
  v.split_ok = c.measured_micro_batches.size() == c.predicted_micro_batches.size();
  for (std::size_t r = 0; r < c.measured_micro_batches.size() && v.split_ok; ++r) {
    v.split_ok = std::abs(c.measured_micro_batches[r] - c.predicted_micro_batches[r]) <= bars.split_micro_batches;
  }
  return v;
}

PipelineComparison compare_pipeline(const PipelineTestbedSpec& spec, const std::vector<PipelineStepRecord>& measured,
                                    const std::vector<PipelineStepRecord>& predicted) {
  PipelineComparison c;
  std::vector<double> m, p;
  std::vector<std::int64_t> first;
  const auto replicas = static_cast<std::size_t>(spec.replicas);
  c.measured_micro_batches.assign(replicas, 0.0);
  c.predicted_micro_batches.assign(replicas, 0.0);
  for (const PipelineStepRecord& rec : measured) {
    if (rec.step < spec.warmup_steps) continue;
    const auto it = std::find_if(predicted.begin(), predicted.end(), [&](const auto& x) { return x.step == rec.step; });
    if (it == predicted.end()) continue;
    m.push_back(rec.step_s);
    p.push_back(it->step_s);
    first.push_back(rec.step);
    for (std::size_t r = 0; r < replicas && r < rec.micro_batches.size() && r < it->micro_batches.size(); ++r) {
      c.measured_micro_batches[r] += static_cast<double>(rec.micro_batches[r]);
      c.predicted_micro_batches[r] += static_cast<double>(it->micro_batches[r]);
    }
  }
  if (m.empty()) return c;
  for (std::size_t r = 0; r < replicas; ++r) {
    c.measured_micro_batches[r] /= static_cast<double>(m.size());
    c.predicted_micro_batches[r] /= static_cast<double>(m.size());
  }
  c.measured_mean_s = mean(m);
  c.predicted_mean_s = mean(p);
  c.mean_error = (c.measured_mean_s - c.predicted_mean_s) / c.predicted_mean_s;
  const std::size_t w = std::min(m.size(), static_cast<std::size_t>(std::max<std::int64_t>(spec.window, 1)));
  c.window = static_cast<std::int64_t>(w);
  for (std::size_t i = 0; i + w <= m.size(); ++i) {
    const double ms = std::accumulate(m.begin() + static_cast<std::ptrdiff_t>(i), m.begin() + static_cast<std::ptrdiff_t>(i + w), 0.0);
    const double ps = std::accumulate(p.begin() + static_cast<std::ptrdiff_t>(i), p.begin() + static_cast<std::ptrdiff_t>(i + w), 0.0);
    const double e = (ms - ps) / ps;
    if (std::abs(e) > std::abs(c.worst_window_error) || i == 0) {
      c.worst_window_error = e;
      c.worst_window_first_step = first[i];
    }
  }
  return c;
}

}  // namespace omnilearn::emulator
