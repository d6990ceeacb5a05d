#include "omnilearn/hybrid/hybrid_run.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policy_registry.h"
#include "hybrid_run_state.h"

namespace omnilearn::hybrid {

const char* policy_name(HybridPolicy policy) {
  switch (policy) {
    case HybridPolicy::kEqual:
      return "equal";
    case HybridPolicy::kStatic:
      return "static";
    case HybridPolicy::kOmnilearn:
      return "omnilearn";
    case HybridPolicy::kOracle:
      return "oracle";
  }
  return "?";
}

Result<HybridPolicy> parse_hybrid_policy(std::string_view name) {
  for (auto p : {HybridPolicy::kEqual, HybridPolicy::kStatic, HybridPolicy::kOmnilearn, HybridPolicy::kOracle}) {
    if (name == policy_name(p)) return p;
  }
  return Status::invalid_argument("policy '" + std::string(name) + "' is not known; expected equal, static, omnilearn or oracle");
}

namespace {
std::string str(std::int64_t v) { return std::to_string(v); }
}  // namespace

namespace detail {

StepConditions HybridRun::conditions_at(Seconds t) const {
  StepConditions c;
  c.speed.assign(spec_.cluster.devices.size(), 1.0);
  c.node_link.assign(static_cast<std::size_t>(spec_.cluster.nodes), 1.0);
  if (spec_.trace) {
    const auto workers = spec_.trace->worker_count();
    for (std::size_t k = 0; k < workers; ++k) {
      const std::int64_t d = spec_.trace_devices.empty() ? static_cast<std::int64_t>(k) : spec_.trace_devices[k];
      if (d >= 0 && d < static_cast<std::int64_t>(c.speed.size())) {
        c.speed[static_cast<std::size_t>(d)] = spec_.trace->fraction_at(static_cast<WorkerId>(k), t);
      }
    }
  }
  for (const SpeedEpisode& e : spec_.episodes) {
    if (t < e.from_s || t >= e.to_s) continue;
    auto& v = e.target == SpeedEpisode::Target::kDevice ? c.speed : c.node_link;
    v[static_cast<std::size_t>(e.index)] *= e.factor;
  }
  return c;
}

const StageCosts* HybridRun::costs_at(std::int64_t tp) {
  auto it = costs_.find(tp);
  if (it == costs_.end()) {
    auto built = StageCosts::build(source_, spec_.cluster, spec_.micro_batch, tp);
    it = costs_.emplace(tp, built.is_ok() ? std::make_unique<StageCosts>(std::move(built).value()) : nullptr).first;
  }
  return it->second.get();
}

void HybridRun::record_placement() {
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    for (std::int64_t s = 0; s < plan_.shape.pp; ++s) {
      for (std::int64_t t = 0; t < plan_.shape.tp; ++t) {
        result_.placements.push_back({applies_from_, plan_.device_at(r, s, t), {r, s, t}});
      }
    }
  }
}

void HybridRun::record_plan(int level, const std::string& reason, Seconds cost_s, Seconds saving_s) {
  result_.plans.push_back({applies_from_, level, reason, cost_s, saving_s, plan_.micro_batches, plan_.layers});
}

Status HybridRun::initial_plan(const StepConditions& now) {
  std::vector<std::int64_t> all(spec_.cluster.devices.size());
  std::iota(all.begin(), all.end(), 0);
  // The controller starts, as the static plan and the oracle do, from the planner's plan for the declared shape at the
  // initial speeds (level 3 at no cost); Megatron-LM's default takes the devices in order with equal splits.
  const bool planned = spec_.policy != HybridPolicy::kEqual;
  if (planned) return replan(now, all, "initial plan", /*keep_shape=*/true);
  costs_now_ = costs_at(spec_.shape.tp);
  if (costs_now_ == nullptr) {
    auto built = StageCosts::build(source_, spec_.cluster, spec_.micro_batch, spec_.shape.tp);
    return built.status();
  }
  plan_.shape = spec_.shape;
  plan_.schedule = spec_.schedule;
  plan_.micro_batch = spec_.micro_batch;
  auto group = default_layout(spec_.cluster, spec_.shape, all);
  if (!group.is_ok()) return group.status();
  plan_.group = std::move(group).value();
  const auto layers = spec_.layers_per_stage.empty() ? even_layers(costs_now_->layer_count(), plan_.virtual_stages())
                                                     : spec_.layers_per_stage;
  plan_.layers.assign(static_cast<std::size_t>(spec_.shape.dp), layers);
  const std::int64_t unit = spec_.schedule.kind == ScheduleKind::kInterleaved ? spec_.shape.pp : 1;
  const auto even = even_micro_batches(spec_.global_batch / spec_.micro_batch / unit, spec_.shape.dp);
  plan_.micro_batches.clear();
  for (std::int64_t m : even) plan_.micro_batches.push_back(m * unit);
  OMNI_RETURN_IF_ERROR(validate_plan(plan_, spec_.cluster, costs_now_->layer_count(), spec_.global_batch));
  OMNI_RETURN_IF_ERROR(check_memory(plan_, spec_.cluster, *costs_now_, spec_.memory));
  record_placement();
  record_plan(0, "initial plan", 0.0, 0.0);
  return Status::ok();
}

PlannerOptions HybridRun::planner_options(bool keep_shape) const {
  PlannerOptions options;
  options.schedule = spec_.schedule;
  options.micro_batch = spec_.micro_batch;
  options.global_batch = spec_.global_batch;
  options.memory = spec_.memory;
  options.step = spec_.step;
  options.step.keep_ops = false;
  if (keep_shape) options.fixed_shape = spec_.shape;
  if (spec_.policy == HybridPolicy::kEqual) {
    // Megatron-LM restarted on fewer devices: the same pp and tp, as many replicas as fit, equal splits.
    options.fixed_shape = {0, spec_.shape.pp, spec_.shape.tp};
  }
  return options;
}

Seconds HybridRun::restart_cost_s() const {
  const double state = costs_now_->params(0, costs_now_->layer_count()) * spec_.memory.state_bytes_per_param /
                       static_cast<double>(plan_.shape.tp * plan_.shape.pp);
  return spec_.control.restart_s + 2.0 * state / spec_.control.checkpoint_bytes_per_s;
}

Status HybridRun::install(HybridPlan plan, const std::string& reason, Seconds saving_s) {
  plan_ = std::move(plan);
  costs_now_ = costs_at(plan_.shape.tp);
  if (spec_.policy == HybridPolicy::kEqual) {
    plan_.layers.assign(static_cast<std::size_t>(plan_.shape.dp), even_layers(costs_now_->layer_count(), plan_.virtual_stages()));
    const std::int64_t unit = spec_.schedule.kind == ScheduleKind::kInterleaved ? plan_.shape.pp : 1;
    const auto even = even_micro_batches(spec_.global_batch / spec_.micro_batch / unit, plan_.shape.dp);
    plan_.micro_batches.clear();
    for (std::int64_t m : even) plan_.micro_batches.push_back(m * unit);
    OMNI_RETURN_IF_ERROR(check_memory(plan_, spec_.cluster, *costs_now_, spec_.memory).with_context(reason));
  }
  record_placement();
  const Seconds cost = applies_from_ == 0 ? 0.0 : restart_cost_s();
  pending_s_ += cost;
  record_plan(3, reason, cost, saving_s);
  return start_controller();
}

Status HybridRun::replan(const StepConditions& speeds, const std::vector<std::int64_t>& live,
                         const std::string& reason, bool keep_shape) {
  auto planned = plan_job(spec_.cluster, live, speeds, planner_options(keep_shape),
                          [this](std::int64_t tp) { return costs_at(tp); });
  if (!planned.is_ok()) return planned.status().with_context(reason);
  return install(std::move(planned->plan), reason, 0.0);
}

Status HybridRun::start_controller() {
  if (spec_.policy != HybridPolicy::kOmnilearn) return Status::ok();
  const std::int64_t unit = plan_.schedule.kind == ScheduleKind::kInterleaved ? plan_.shape.pp : 1;
  const std::int64_t units = spec_.global_batch / spec_.micro_batch / unit;
  controller::ControllerOptions o;
  o.global_batch = static_cast<BatchSize>(units);
  o.dead_band = spec_.control.dead_band;
  o.every_n = spec_.control.every_n;
  o.ewma_alpha = 1.0;
  o.memory_guard = false;
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    o.workers.push_back({1, static_cast<BatchSize>(units), 1.0});
  }
  controller::PolicyOptions po;
  auto policy = controller::make_default_registry().make(spec_.control.batch_policy, po);
  if (!policy.is_ok()) return policy.status().with_context("control.batch_policy");
  auto c = controller::Controller::create(std::move(o), std::move(policy).value());
  if (!c.is_ok()) return c.status();
  controller_.emplace(std::move(c).value());
  return Status::ok();
}

void HybridRun::add_timeline(const HybridStep& step, Seconds start_s) {
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    for (std::int64_t s = 0; s < plan_.shape.pp; ++s) {
      const StageActivity& a = step.pipelines[static_cast<std::size_t>(r)].stages[static_cast<std::size_t>(s)];
      for (std::int64_t t = 0; t < plan_.shape.tp; ++t) {
        const std::int64_t d = plan_.device_at(r, s, t);
        for (const OpSpan& op : a.ops) {
          std::string name = (op.op.pass == PassKind::kForward ? "F" : "B") + str(op.op.micro_batch);
          if (plan_.schedule.chunks > 1) name += "." + str(op.op.chunk);
          result_.timeline.push_back({step_, d, std::move(name), start_s + op.start_s, start_s + op.end_s});
        }
        const Seconds ar_end = step.allreduce_end_s[static_cast<std::size_t>(d)];
        if (step.device[static_cast<std::size_t>(d)].comm_s > 0.0) {
          result_.timeline.push_back({step_, d, "allreduce", start_s + ar_end - step.device[static_cast<std::size_t>(d)].comm_s, start_s + ar_end});
        }
        const Seconds update = step.device[static_cast<std::size_t>(d)].compute_s - a.compute_s;
        result_.timeline.push_back({step_, d, "update", start_s + ar_end, start_s + ar_end + update});
      }
    }
  }
}

std::int64_t HybridRun::follow_membership(const StepConditions& truth, const StepConditions& measured, bool has_measured,
                                         Status& status) {
  std::vector<std::int64_t> live;
  for (std::size_t d = 0; d < truth.speed.size(); ++d) {
    if (truth.speed[d] > 0.0) live.push_back(static_cast<std::int64_t>(d));
  }
  const auto count = static_cast<std::int64_t>(live.size());
  bool lost = false;
  for (std::int64_t d : plan_.group) lost = lost || !(truth.speed[static_cast<std::size_t>(d)] > 0.0);
  // More devices than when the plan was made, enough for another replica: the policies that adapt take them.
  const bool joined = !lost && count > live_at_plan_ && count - plan_.shape.devices() >= plan_.shape.pp * plan_.shape.tp &&
                      spec_.policy != HybridPolicy::kEqual && spec_.policy != HybridPolicy::kStatic;
  if (!lost && !joined) {
    live_at_plan_ = std::min(live_at_plan_, count);
    return count;
  }
  // Whoever re-plans knows the speeds it last measured; the oracle and the planner-made plans know the truth.
  StepConditions usable = spec_.policy == HybridPolicy::kOmnilearn && has_measured ? measured : truth;
  for (std::size_t d = 0; d < usable.speed.size(); ++d) {
    if (!(truth.speed[d] > 0.0)) {
      usable.speed[d] = 0.0;
    } else if (!(usable.speed[d] > 0.0)) {
      usable.speed[d] = truth.speed[d];
    }
  }
  status = replan(usable, live, lost ? "devices left" : "devices joined",
                  spec_.policy == HybridPolicy::kEqual || spec_.policy == HybridPolicy::kStatic);
  live_at_plan_ = count;
  return count;
}

void HybridRun::account(const HybridStep& step, Seconds now, std::int64_t live) {
  const Seconds duration = step.step_s + pending_s_;
  result_.steps.push_back({step_, now, duration, pending_s_, plan_.micro_batches, live});
  for (std::size_t d = 0; d < step.device.size(); ++d) {
    DeviceTime& total = result_.device_totals[d];
    total.compute_s += step.device[d].compute_s;
    total.bubble_s += step.device[d].bubble_s;
    total.comm_s += step.device[d].comm_s;
    total.wait_s += step.device[d].wait_s;
  }
  pending_s_ = 0.0;
}

Result<HybridRunResult> HybridRun::run(const std::function<void(std::int64_t)>& progress) {
  result_.policy = policy_name(spec_.policy);
  result_.device_totals.assign(spec_.cluster.devices.size(), DeviceTime{});
  Seconds now = 0.0;
  StepConditions previous = conditions_at(0.0);
  OMNI_RETURN_IF_ERROR(initial_plan(previous));
  OMNI_RETURN_IF_ERROR(start_controller());
  result_.memory = plan_memory(plan_, spec_.cluster, *costs_now_, spec_.memory);
  live_at_plan_ = static_cast<std::int64_t>(spec_.cluster.devices.size());
  std::optional<HybridStep> last;
  for (step_ = 0; step_ < spec_.steps; ++step_) {
    applies_from_ = step_;
    const StepConditions truth = conditions_at(now);
    Status membership;
    const std::int64_t live = follow_membership(truth, previous, last.has_value(), membership);
    OMNI_RETURN_IF_ERROR(membership);
    if (result_.plans.back().level == 3 && result_.plans.back().step == step_ && step_ > 0) last.reset();
    if (spec_.policy == HybridPolicy::kOracle) resolve_with_truth(truth);
    StepOptions options = spec_.step;
    options.keep_ops = step_ < spec_.timeline_steps;
    auto step = simulate_step(plan_, spec_.cluster, *costs_now_, truth, options);
    if (!step.is_ok()) return step.status().with_context("step " + str(step_));
    if (options.keep_ops) add_timeline(*step, now + pending_s_);
    const Seconds duration = step->step_s + pending_s_;
    account(*step, now, live);
    now += duration;
    applies_from_ = step_ + 1;
    if (spec_.policy == HybridPolicy::kOmnilearn) {
      OMNI_RETURN_IF_ERROR(control_after(*step, last ? &*last : nullptr, truth, now, previous));
    } else {
      previous = truth;
    }
    last = std::move(step).value();
    if (progress) progress(step_);
  }
  result_.total_s = now;
  result_.final_shape = plan_.shape;
  return std::move(result_);
}

}  // namespace detail

Result<HybridRunResult> run_hybrid(const HybridRunSpec& spec, const LayerCostSource& source,
                                   const std::function<void(std::int64_t)>& progress) {
  if (spec.steps < 1) return Status::invalid_argument("steps must be >= 1, got " + str(spec.steps));
  if (spec.micro_batch < 1 || spec.global_batch % spec.micro_batch != 0) {
    return Status::invalid_argument("job.global_batch (" + str(spec.global_batch) +
                                    ") must be a positive multiple of job.micro_batch (" + str(spec.micro_batch) + ")");
  }
  for (const SpeedEpisode& e : spec.episodes) {
    const std::int64_t n = e.target == SpeedEpisode::Target::kDevice ? static_cast<std::int64_t>(spec.cluster.devices.size())
                                                                      : spec.cluster.nodes;
    if (e.index < 0 || e.index >= n) {
      return Status::invalid_argument(std::string("episode: ") +
                                      (e.target == SpeedEpisode::Target::kDevice ? "device " : "node ") + str(e.index) +
                                      " does not exist (" + str(n) + " in the cluster)");
    }
    if (!(e.factor >= 0.0) || !(e.to_s > e.from_s)) {
      return Status::invalid_argument("episode: factor must be >= 0 and to_s > from_s");
    }
  }
  detail::HybridRun run(spec, source);
  return run.run(progress);
}

}  // namespace omnilearn::hybrid
