// The hybrid controller's levels inside a run (hybrid_run_state.h): level 2's layer moves (also the oracle's), the
// speeds a stage's measured times give, level 1's decisions through controller::Controller, and level 3 when the
// lower levels sit at their bounds.
#include <algorithm>
#include <cmath>

#include "hybrid_run_state.h"

namespace omnilearn::hybrid::detail {

bool HybridRun::at_bounds(const HybridStep& step) const {
  if (plan_.shape.dp < 2) return false;
  const std::int64_t unit = plan_.schedule.kind == ScheduleKind::kInterleaved ? plan_.shape.pp : 1;
  const Seconds slowest = *std::max_element(step.replica_s.begin(), step.replica_s.end());
  double others = 0.0;
  for (Seconds t : step.replica_s) others += t;
  for (std::size_t r = 0; r < step.replica_s.size(); ++r) {
    if (plan_.micro_batches[r] > unit || step.replica_s[r] < slowest) continue;
    const double mean_others = (others - step.replica_s[r]) / static_cast<double>(step.replica_s.size() - 1);
    if (step.replica_s[r] > (1.0 + spec_.control.imbalance_threshold) * mean_others) return true;
  }
  return false;
}

Status HybridRun::replan_if_it_pays(const StepConditions& estimate) {
  std::vector<std::int64_t> live;
  for (std::size_t d = 0; d < estimate.speed.size(); ++d) {
    if (estimate.speed[d] > 0.0) live.push_back(static_cast<std::int64_t>(d));
  }
  auto planned = plan_job(spec_.cluster, live, estimate, planner_options(/*keep_shape=*/false),
                          [this](std::int64_t tp) { return costs_at(tp); });
  if (!planned.is_ok()) return Status::ok();  // nothing better fits: keep the plan
  auto now = simulate_step(plan_, spec_.cluster, *costs_now_, estimate, spec_.step);
  if (!now.is_ok()) return now.status();
  const Seconds saving = now->step_s - planned->predicted_step_s;
  if (saving * static_cast<double>(spec_.control.horizon_steps) <= restart_cost_s()) return Status::ok();
  return install(std::move(planned->plan), "lower levels at their bounds", saving);
}

void HybridRun::rebalance_layers(const StepConditions& speeds, const char* reason) {
  auto now = simulate_step(plan_, spec_.cluster, *costs_now_, speeds, spec_.step);
  if (!now.is_ok()) return;
  HybridPlan trial = plan_;
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    trial.layers[static_cast<std::size_t>(r)] =
        balance_layers(plan_, r, spec_.cluster, *costs_now_, speeds, spec_.memory);
  }
  // balance_layers weighs compute only; a stage whose gradients' all-reduce or sends are slow (a slow link) needs
  // fewer layers than that. A local search moves one layer across one boundary at a time while the whole step,
  // all-reduces included, gets shorter (small jobs only: each try simulates a step).
  Seconds best = 0.0;
  {
    auto start = simulate_step(trial, spec_.cluster, *costs_now_, speeds, spec_.step);
    if (!start.is_ok()) return;
    best = start->step_s;
  }
  if (plan_.shape.devices() <= kLocalSearchDevices) {
    for (bool improved = true; improved;) {
      improved = false;
      for (std::size_t r = 0; r < trial.layers.size(); ++r) {
        for (std::size_t j = 0; j + 1 < trial.layers[r].size(); ++j) {
          for (int dir : {-4, -2, -1, 1, 2, 4}) {
            HybridPlan moved = trial;
            auto& l = moved.layers[r];
            l[j] -= dir;
            l[j + 1] += dir;
            if (l[j] < 1 || l[j + 1] < 1) continue;
            if (!check_memory(moved, spec_.cluster, *costs_now_, spec_.memory).is_ok()) continue;
            auto t = simulate_step(moved, spec_.cluster, *costs_now_, speeds, spec_.step);
            if (!t.is_ok() || t->step_s >= best - 1e-9) continue;
            best = t->step_s;
            trial = std::move(moved);
            improved = true;
          }
        }
      }
    }
  }
  if (trial.layers == plan_.layers) return;
  if (!check_memory(trial, spec_.cluster, *costs_now_, spec_.memory).is_ok()) return;
  const Seconds saving = now->step_s - best;
  // Moving a layer sends its weights and optimizer state to its new stage; replicas move in parallel.
  Seconds cost = 0.0;
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    double moved = 0.0;
    for (std::int64_t l = 0; l < costs_now_->layer_count(); ++l) {
      auto holder = [&](const HybridPlan& p) {
        std::int64_t j = 0, end = p.layers[static_cast<std::size_t>(r)][0];
        while (end <= l) end += p.layers[static_cast<std::size_t>(r)][static_cast<std::size_t>(++j)];
        return j;
      };
      if (holder(plan_) != holder(trial)) moved += costs_now_->params(l, 1) * spec_.memory.state_bytes_per_param;
    }
    cost = std::max(cost, moved / spec_.cluster.network.inter_node_bytes_per_s);
  }
  if (saving * static_cast<double>(spec_.control.horizon_steps) <= cost) return;
  if (saving <= 0.0) return;
  plan_.layers = std::move(trial.layers);
  pending_s_ += cost;
  record_plan(2, reason, cost, saving);
}

StepConditions HybridRun::estimated_speeds(const HybridStep& step, const StepConditions& previous) const {
  // A stage's measured pass seconds against what its layers take at full speed give its group's speed.
  StepConditions est = previous;
  StepConditions full;
  full.speed.assign(spec_.cluster.devices.size(), 1.0);
  full.node_link = previous.node_link;
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    const ReplicaTimes nominal = replica_times(plan_, r, spec_.cluster, *costs_now_, full);
    const double m = static_cast<double>(plan_.micro_batches[static_cast<std::size_t>(r)]);
    for (std::int64_t s = 0; s < plan_.shape.pp; ++s) {
      Seconds expected = 0.0;
      for (std::int64_t j = s; j < plan_.virtual_stages(); j += plan_.shape.pp) {
        expected += m * (nominal.forward_s[static_cast<std::size_t>(j)] + nominal.backward_s[static_cast<std::size_t>(j)]);
      }
      const Seconds measured = step.stage_compute_s[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)];
      const double speed = measured > 0.0 ? expected / measured : 1.0;
      for (std::int64_t t = 0; t < plan_.shape.tp; ++t) {
        est.speed[static_cast<std::size_t>(plan_.device_at(r, s, t))] = speed;
      }
    }
  }
  return est;
}

Status HybridRun::level_one(const HybridStep& step, Seconds now_s) {
  const std::int64_t unit = plan_.schedule.kind == ScheduleKind::kInterleaved ? plan_.shape.pp : 1;
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    controller::IterationDone done;
    done.worker = static_cast<WorkerId>(r);
    done.step = step_;
    done.end_s = now_s;
    done.compute_s = step.replica_s[static_cast<std::size_t>(r)];
    done.batch = static_cast<BatchSize>(plan_.micro_batches[static_cast<std::size_t>(r)] / unit);
    OMNI_RETURN_IF_ERROR(controller_->report(done));
  }
  auto next = controller_->plan_next({step_ + 1, 0, now_s});
  if (!next.is_ok()) return next.status();
  if (!next->changed) return Status::ok();
  for (std::int64_t r = 0; r < plan_.shape.dp; ++r) {
    plan_.micro_batches[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(next->batch[static_cast<std::size_t>(r)]) * unit;
  }
  record_plan(1, "replica step times", 0.0, 0.0);
  return Status::ok();
}

void HybridRun::resolve_with_truth(const StepConditions& truth) {
  rebalance_layers(truth, "re-solved with the true speeds");
  auto m = balance_micro_batches(plan_, spec_.cluster, *costs_now_, truth);
  if (m.is_ok() && *m != plan_.micro_batches) {
    plan_.micro_batches = std::move(m).value();
    record_plan(1, "re-solved with the true speeds", 0.0, 0.0);
  }
}

Status HybridRun::control_after(const HybridStep& step, const HybridStep* last, const StepConditions& truth,
                                Seconds now_s, StepConditions& estimate) {
  OMNI_RETURN_IF_ERROR(level_one(step, now_s));
  estimate = estimated_speeds(step, truth);
  bounded_steps_ = at_bounds(step) ? bounded_steps_ + 1 : 0;
  if (bounded_steps_ >= kBoundedSteps) {
    bounded_steps_ = 0;
    OMNI_RETURN_IF_ERROR(replan_if_it_pays(estimate));
  }
  const bool due = step_ + 1 - last_layer_step_ >= spec_.control.layer_every_n;
  const bool changed =
      last != nullptr && std::abs(step.step_s / last->step_s - 1.0) > spec_.control.imbalance_threshold;
  if (due || changed) {
    last_layer_step_ = step_ + 1;
    rebalance_layers(estimate, "measured stage imbalance");
  }
  return Status::ok();
}

}  // namespace omnilearn::hybrid::detail
