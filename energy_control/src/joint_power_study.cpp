#include "omnilearn/energy_control/joint_power_study.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <random>
#include <utility>

#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/joint_power_controller.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/energy_control/static_power_plans.h"

namespace omnilearn::energy_control {
namespace {

using controller::JointPlan;

// Each compute time's factor, per step and worker: log-normal with mean 1 (exp(σ z − σ²/2)), z by Box-Muller from
// mt19937_64's top 53 bits (std's distributions differ between standard libraries; this does not).
// Worker k's factors are also multiplied by `truth[k]` (empty: 1).
std::vector<std::vector<double>> jitter(std::uint64_t seed, std::int64_t steps, std::size_t workers, double sigma,
                                        const std::vector<double>& truth) {
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  std::vector<std::vector<double>> out(static_cast<std::size_t>(steps), std::vector<double>(workers));
  for (auto& row : out) {
    for (std::size_t k = 0; k < workers; ++k) {
      const double z = std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * std::numbers::pi * uniform());
      row[k] = std::exp(sigma * z - 0.5 * sigma * sigma) * (truth.empty() ? 1.0 : truth[k]);
    }
  }
  return out;
}

// A policy in the driver's loop: the plan in force, and what it does with a step's measured compute times.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual const JointPlan& plan() const = 0;
  virtual Status after_step(std::int64_t step, Seconds now_s, const std::vector<Seconds>& compute_s) = 0;
};

class StaticRunner final : public Runner {
 public:
  explicit StaticRunner(JointPlan plan) : plan_(std::move(plan)) {}
  const JointPlan& plan() const override { return plan_; }
  Status after_step(std::int64_t, Seconds, const std::vector<Seconds>&) override { return Status::ok(); }

 private:
  JointPlan plan_;
};

// OmniLearn's batch controller (every_n steps, dead-band 5%) at fixed limits; starts from equal batches.
class OmniLearnRunner final : public Runner {
 public:
  static Result<std::unique_ptr<Runner>> create(const GpuClusterModel& model, std::vector<std::size_t> limits,
                                                std::int64_t every_n) {
    controller::ControllerOptions o;
    o.global_batch = model.global_batch;
    for (const auto& w : model.workers) o.workers.push_back({w.lo, w.hi, 1.0});
    o.every_n = every_n;
    auto policy = controller::make_default_registry().make("omnilearn", {});
    if (!policy) return policy.status();
    auto c = controller::Controller::create(std::move(o), std::move(*policy));
    if (!c) return c.status();
    return std::unique_ptr<Runner>(new OmniLearnRunner(std::move(*c), std::move(limits)));
  }
  const JointPlan& plan() const override { return plan_; }
  Status after_step(std::int64_t step, Seconds now_s, const std::vector<Seconds>& compute_s) override {
    for (WorkerId k = 0; k < compute_s.size(); ++k) {
      OMNI_RETURN_IF_ERROR(controller_.report(controller::IterationDone{k, step, now_s, compute_s[k], plan_.batch[k]}));
    }
    auto next = controller_.plan_next(controller::DecisionPoint{step, 0, now_s});
    if (!next) return next.status();
    plan_.batch = next->batch;
    return Status::ok();
  }

 private:
  OmniLearnRunner(controller::Controller c, std::vector<std::size_t> limits) : controller_(std::move(c)) {
    plan_.batch = controller_.current_plan().batch;
    plan_.limit = std::move(limits);
  }
  controller::Controller controller_;
  JointPlan plan_;
};

class JointRunner final : public Runner {
 public:
  explicit JointRunner(controller::JointPowerController c) : controller_(std::move(c)) {}
  const JointPlan& plan() const override { return controller_.current_plan(); }
  Status after_step(std::int64_t step, Seconds, const std::vector<Seconds>& compute_s) override {
    for (WorkerId k = 0; k < compute_s.size(); ++k) OMNI_RETURN_IF_ERROR(controller_.report(k, compute_s[k]));
    auto decided = controller_.plan_next(step);
    return decided ? Status::ok() : decided.status();
  }

 private:
  controller::JointPowerController controller_;
};

// Runs `steps` steps of `runner` under the jitter `factors`: the figures of one epoch (per-step means times the
// epoch's steps) and the plan at the end.
Result<std::pair<EpochFigures, std::string>> run_steps(const GpuClusterModel& model, Runner& runner,
                                                       const std::vector<std::vector<double>>& factors) {
  double energy_j = 0.0;
  Seconds now_s = 0.0;
  std::vector<Seconds> compute_s(model.workers.size());
  for (std::size_t s = 0; s < factors.size(); ++s) {
    const JointPlan& plan = runner.plan();
    auto cost = controller::joint_step_cost(model.workers, plan.batch, plan.limit, model.cost, factors[s]);
    if (!cost) return cost.status();
    for (std::size_t k = 0; k < compute_s.size(); ++k) {
      const auto& w = model.workers[k];
      compute_s[k] = w.limits[plan.limit[k]].time_s[static_cast<std::size_t>(plan.batch[k] - w.lo)] * factors[s][k];
    }
    energy_j += cost->energy_j;
    now_s += cost->step_s;
    OMNI_RETURN_IF_ERROR(runner.after_step(static_cast<std::int64_t>(s + 1), now_s, compute_s));
  }
  const double scale = model.steps_per_epoch() / static_cast<double>(factors.size());
  EpochFigures f{energy_j * scale, now_s * scale, 0.0};
  f.cost = model.cost.eta * f.energy_j + (1.0 - model.cost.eta) * model.cost.max_power_w * f.time_s;
  std::string plan;
  for (std::size_t k = 0; k < model.workers.size(); ++k) {
    const auto& p = runner.plan();
    plan += (k ? ", " : "") + model.kinds[k] + " " + std::to_string(p.batch[k]) + "@" +
            std::to_string(static_cast<int>(model.workers[k].limits[p.limit[k]].limit_w));
  }
  return std::make_pair(f, plan);
}

// The static plans and limits every policy starts from.
struct Baselines {
  JointPlan zeus_equal;
  JointPlan zeus_at_share;
  JointPlan grid;
};

Result<Baselines> make_baselines(const traces::GpuPowerTable& table, const GpuClusterSpec& spec,
                                 const GpuClusterModel& model, const StudyOptions& options) {
  std::vector<ZeusChoice> choices;
  for (const auto& kind : model.kinds) {
    auto c = zeus_best_measured(table, kind, spec.workload, spec.eta);
    if (!c) return c.status();
    choices.push_back(*c);
  }
  auto by_kind = limits_by_kind(model, choices);
  if (!by_kind) return by_kind.status();
  auto zeus_equal = equal_batch_plan(model, *by_kind);
  if (!zeus_equal) return zeus_equal.status();
  std::vector<std::size_t> at_share;
  for (std::size_t k = 0; k < model.workers.size(); ++k) {
    at_share.push_back(zeus_limit_at_batch(model.workers[k], zeus_equal->batch[k], spec.eta));
  }
  auto zeus_at_share = equal_batch_plan(model, at_share);
  if (!zeus_at_share) return zeus_at_share.status();
  auto grid = best_static_grid(model, options.grid_step, options.true_time_factor);
  if (!grid) return grid.status();
  return Baselines{std::move(*zeus_equal), std::move(*zeus_at_share), std::move(*grid)};
}

Result<std::unique_ptr<Runner>> make_runner(PowerPolicy policy, const GpuClusterModel& model, const Baselines& base,
                                            const StudyOptions& options) {
  switch (policy) {
    case PowerPolicy::kOmniLearnMaxLimits:
      return OmniLearnRunner::create(model, highest_limits(model), options.every_n);
    case PowerPolicy::kZeusEqualBatches:
      return std::unique_ptr<Runner>(new StaticRunner(base.zeus_equal));
    case PowerPolicy::kZeusAtShare:
      return std::unique_ptr<Runner>(new StaticRunner(base.zeus_at_share));
    case PowerPolicy::kOmniLearnZeusLimits:
      return OmniLearnRunner::create(model, base.zeus_at_share.limit, options.every_n);
    case PowerPolicy::kBestStaticGrid:
      return std::unique_ptr<Runner>(new StaticRunner(base.grid));
    case PowerPolicy::kJoint:
      break;
  }
  controller::JointControllerOptions o;
  o.cost = model.cost;
  o.every_n = options.every_n;
  o.ewma_alpha = options.ewma_alpha;
  auto c = controller::JointPowerController::create(model.workers, model.global_batch, o);
  if (!c) return c.status();
  return std::unique_ptr<Runner>(new JointRunner(std::move(*c)));
}

constexpr PowerPolicy kPolicies[] = {PowerPolicy::kOmniLearnMaxLimits, PowerPolicy::kZeusEqualBatches,
                                     PowerPolicy::kZeusAtShare,        PowerPolicy::kOmniLearnZeusLimits,
                                     PowerPolicy::kBestStaticGrid,     PowerPolicy::kJoint};

void summarise(PolicyResult& r, const PolicyResult& joint) {
  std::vector<double> energy, time, cost, saving;
  for (std::size_t i = 0; i < r.per_seed.size(); ++i) {
    energy.push_back(r.per_seed[i].energy_j);
    time.push_back(r.per_seed[i].time_s);
    cost.push_back(r.per_seed[i].cost);
    saving.push_back(1.0 - joint.per_seed[i].cost / r.per_seed[i].cost);
  }
  r.energy_j = mean_interval(energy);
  r.time_s = mean_interval(time);
  r.cost = mean_interval(cost);
  r.joint_saving = mean_interval(saving);
}

}  // namespace

const char* to_string(PowerPolicy policy) {
  switch (policy) {
    case PowerPolicy::kOmniLearnMaxLimits:
      return "omnilearn-max-limits";
    case PowerPolicy::kZeusEqualBatches:
      return "zeus-equal-batches";
    case PowerPolicy::kZeusAtShare:
      return "zeus-at-share";
    case PowerPolicy::kOmniLearnZeusLimits:
      return "omnilearn-zeus-limits";
    case PowerPolicy::kBestStaticGrid:
      return "best-static-grid";
    case PowerPolicy::kJoint:
      break;
  }
  return "joint";
}

Interval mean_interval(const std::vector<double>& values) {
  // Student's t at 97.5% for 1..30 degrees of freedom; the normal 1.96 beyond.
  static constexpr double kT975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                     2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                     2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  Interval out;
  if (values.empty()) return out;
  for (const double v : values) out.mean += v;
  const auto n = values.size();
  out.mean /= static_cast<double>(n);
  if (n < 2) return out;
  double ss = 0.0;
  for (const double v : values) ss += (v - out.mean) * (v - out.mean);
  const double t = n - 1 <= std::size(kT975) ? kT975[n - 2] : 1.96;
  out.half_width = t * std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n));
  return out;
}

Result<std::vector<PolicyResult>> run_joint_power_study(const traces::GpuPowerTable& table, const GpuClusterSpec& spec,
                                                        const StudyOptions& options) {
  if (options.steps < 1 || options.seeds.empty() || !(options.jitter_sigma >= 0.0)) {
    return Status::invalid_argument("steps >= 1, at least one seed and jitter_sigma >= 0 are required");
  }
  auto model = build_gpu_cluster_model(table, spec);
  if (!model) return model.status();
  if (!options.true_time_factor.empty() && options.true_time_factor.size() != model->workers.size()) {
    return Status::invalid_argument("true_time_factor needs one value per worker");
  }
  for (const double f : options.true_time_factor) {
    if (!(f > 0.0) || !std::isfinite(f)) return Status::invalid_argument("true_time_factor must be positive");
  }
  auto base = make_baselines(table, spec, *model, options);
  if (!base) return base.status();
  std::vector<PolicyResult> results;
  for (const PowerPolicy p : kPolicies) results.push_back(PolicyResult{p, {}, {}, {}, {}, {}, {}});
  for (const std::uint64_t seed : options.seeds) {
    const auto factors =
        jitter(seed, options.steps, model->workers.size(), options.jitter_sigma, options.true_time_factor);
    for (auto& r : results) {
      auto runner = make_runner(r.policy, *model, *base, options);
      if (!runner) return runner.status().with_context(to_string(r.policy));
      auto run = run_steps(*model, **runner, factors);
      if (!run) return run.status().with_context(std::string(to_string(r.policy)) + ", seed " + std::to_string(seed));
      r.per_seed.push_back(run->first);
      if (r.plan.empty()) r.plan = run->second;
    }
  }
  for (auto& r : results) summarise(r, results.back());
  return results;
}

std::string format_joint_power_table(const std::vector<PolicyResult>& results) {
  auto pm = [](const Interval& i, double scale, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, i.mean * scale, i.half_width * scale);
    return std::string(buf);
  };
  std::string out =
      "| policy | cost per epoch (MJ) | energy per epoch (MJ) | time per epoch (s) | joint's saving | plan at the end "
      "(seed 1) |\n|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    out += "| " + std::string(to_string(r.policy)) + " | " + pm(r.cost, 1e-6, "%.4f ± %.4f") + " | " +
           pm(r.energy_j, 1e-6, "%.4f ± %.4f") + " | " + pm(r.time_s, 1.0, "%.1f ± %.1f") + " | " +
           (r.policy == PowerPolicy::kJoint ? std::string("") : pm(r.joint_saving, 100.0, "%.2f%% ± %.2f")) + " | " +
           r.plan + " |\n";
  }
  return out;
}

}  // namespace omnilearn::energy_control
