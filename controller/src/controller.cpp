#include "omnilearn/controller/controller.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "omnilearn/controller/allocation.h"

namespace omnilearn::controller {
namespace {

std::string worker_field(std::size_t k, const char* field) {
  return "workers[" + std::to_string(k) + "]." + field;
}

}  // namespace

const char* to_string(PlanReason reason) {
  switch (reason) {
    case PlanReason::kInitial: return "initial";
    case PlanReason::kScheduled: return "scheduled";
    case PlanReason::kMembership: return "membership";
    case PlanReason::kHeldByDeadBand: return "dead-band";
    case PlanReason::kNotDue: return "not-due";
  }
  return "?";
}

Status ControllerOptions::validate() const {
  if (workers.empty()) return Status::invalid_argument("workers: at least one worker is required");
  if (global_batch < 1) return Status::invalid_argument("global_batch: must be >= 1, got " + std::to_string(global_batch));
  BatchSize sum_lo = 0;
  BatchSize sum_hi = 0;
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const WorkerSpec& w = workers[k];
    if (w.lo < 1) return Status::invalid_argument(worker_field(k, "lo") + ": must be >= 1, got " + std::to_string(w.lo));
    if (w.hi < w.lo) {
      return Status::invalid_argument(worker_field(k, "hi") + ": must be >= lo (" + std::to_string(w.lo) + "), got " +
                                      std::to_string(w.hi));
    }
    if (!(w.nominal_capacity > 0.0) || !std::isfinite(w.nominal_capacity)) {
      return Status::invalid_argument(worker_field(k, "nominal_capacity") + ": must be a positive number");
    }
    sum_lo += w.lo;
    sum_hi += w.hi;
  }
  if (mode == TrainingMode::kBsp && (global_batch < sum_lo || global_batch > sum_hi)) {
    return Status::invalid_argument("global_batch: bounds cannot hold B = " + std::to_string(global_batch) +
                                    " (the workers' bounds allow " + std::to_string(sum_lo) + ".." +
                                    std::to_string(sum_hi) + ")");
  }
  if (!(dead_band >= 0.0)) return Status::invalid_argument("dead_band: must be >= 0");
  if (!(ewma_alpha > 0.0 && ewma_alpha <= 1.0)) return Status::invalid_argument("ewma_alpha: must be in (0, 1]");
  if (every_n < 1) return Status::invalid_argument("every_n: must be >= 1");
  if (!(imbalance_threshold >= 0.0)) return Status::invalid_argument("imbalance_threshold: must be >= 0");
  if (!(memory_guard_tolerance >= 0.0 && memory_guard_tolerance < 1.0)) {
    return Status::invalid_argument("memory_guard_tolerance: must be in [0, 1)");
  }
  if (history_length < 2) return Status::invalid_argument("history_length: must be >= 2");
  return Status::ok();
}

Controller::Controller(ControllerOptions options, std::unique_ptr<BatchPolicy> policy)
    : options_(std::move(options)), policy_(std::move(policy)) {
  workers_.resize(options_.workers.size());
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    workers_[k].spec = options_.workers[k];
    workers_[k].hi = options_.workers[k].hi;
  }
  plan_.batch.assign(workers_.size(), 0);
  plan_.weight.assign(workers_.size(), 0.0);
}

Result<Controller> Controller::create(ControllerOptions options, std::unique_ptr<BatchPolicy> policy) {
  if (!policy) return Status::invalid_argument("policy: none given");
  OMNI_RETURN_IF_ERROR(options.validate());
  Controller c(std::move(options), std::move(policy));
  // Start from the equal split (what a user of plain data parallelism runs), then let the policy place it; open-
  // loop policies move away from it at once, closed-loop ones keep it until they have measurements.
  const std::size_t n = c.workers_.size();
  std::vector<BatchSize> lo(n);
  std::vector<BatchSize> hi(n);
  for (std::size_t k = 0; k < n; ++k) lo[k] = c.workers_[k].spec.lo, hi[k] = c.workers_[k].hi;
  const BatchSize total = c.effective_global_batch();
  auto equal = allocate_proportional(std::vector<double>(n, 1.0), lo, hi, total);
  if (!equal) return equal.status();
  const DecisionPoint start{};
  c.install(*equal, start);
  BatchPlan first = c.policy_->decide(c.snapshot(0, 0.0));
  OMNI_RETURN_IF_ERROR(c.validate_plan(first, total));
  c.install(first.batch, start);
  c.plan_.decided = true;
  c.plan_.changed = true;
  c.plan_.reason = PlanReason::kInitial;
  return c;
}

BatchSize Controller::effective_global_batch() const {
  BatchSize sum_lo = 0;
  BatchSize sum_hi = 0;
  for (const WorkerState& w : workers_) {
    if (!w.live) continue;
    sum_lo += w.spec.lo;
    sum_hi += w.hi;
  }
  if (options_.mode == TrainingMode::kAsp) {
    // ASP does not conserve B; the snapshot carries it as the reference sum for policies that split it.
    const BatchSize per_worker = options_.global_batch / static_cast<BatchSize>(workers_.size());
    BatchSize live = 0;
    for (const WorkerState& w : workers_) live += w.live ? 1 : 0;
    return std::clamp(std::max<BatchSize>(per_worker, 1) * live, sum_lo, sum_hi);
  }
  // Too few live workers to hold B within their bounds: hold as much as they can (reported in the plan).
  return std::clamp(options_.global_batch, sum_lo, sum_hi);
}

ClusterSnapshot Controller::snapshot(std::int64_t step, Seconds now_s) const {
  ClusterSnapshot s;
  s.step = step;
  s.now_s = now_s;
  s.mode = options_.mode;
  s.global_batch = effective_global_batch();
  s.workers.resize(workers_.size());
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const WorkerState& w = workers_[k];
    WorkerView& v = s.workers[k];
    v.id = static_cast<WorkerId>(k);
    v.live = w.live;
    v.batch = plan_.batch[k];
    v.compute_s = (w.live && w.samples > 0) ? w.ewma_s : 0.0;
    v.lo = w.spec.lo;
    v.hi = w.hi;
    v.nominal_capacity = w.spec.nominal_capacity;
    v.last_throughput = w.last_throughput;
    v.history = w.history;
  }
  return s;
}

Status Controller::validate_plan(const BatchPlan& plan, BatchSize global_batch) const {
  const std::string who = "policy '" + std::string(policy_->name()) + "'";
  if (plan.batch.size() != workers_.size()) {
    return Status::internal(who + " returned " + std::to_string(plan.batch.size()) + " batches for " +
                            std::to_string(workers_.size()) + " workers");
  }
  BatchSize sum = 0;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const BatchSize b = plan.batch[k];
    const WorkerState& w = workers_[k];
    if (!w.live && b != 0) return Status::internal(who + " gave work to worker " + std::to_string(k) + ", which is down");
    if (w.live && (b < w.spec.lo || b > w.hi)) {
      return Status::internal(who + " gave worker " + std::to_string(k) + " batch " + std::to_string(b) +
                              " outside its bounds [" + std::to_string(w.spec.lo) + ", " + std::to_string(w.hi) + "]");
    }
    sum += b;
  }
  if (options_.mode == TrainingMode::kBsp && sum != global_batch) {
    return Status::internal(who + " planned a global batch of " + std::to_string(sum) + " instead of " +
                            std::to_string(global_batch));
  }
  return Status::ok();
}

Status Controller::report(const IterationDone& e) {
  if (e.worker >= workers_.size()) return Status::invalid_argument("IterationDone: unknown worker " + std::to_string(e.worker));
  if (!(e.compute_s >= 0.0) || !std::isfinite(e.compute_s)) {
    return Status::invalid_argument("IterationDone: worker " + std::to_string(e.worker) + " reported compute_s " +
                                    std::to_string(e.compute_s));
  }
  WorkerState& w = workers_[e.worker];
  // Iterations of a worker that is down, or that ran with a batch from an older plan, say nothing about now.
  if (!w.live || e.batch != plan_.batch[e.worker] || e.compute_s == 0.0) return Status::ok();
  // Bias-corrected EWMA: the plain mean of the first 1/alpha samples at this batch, then exponential forgetting.
  ++w.samples;
  const double weight = std::max(options_.ewma_alpha, 1.0 / static_cast<double>(w.samples));
  w.ewma_s += weight * (e.compute_s - w.ewma_s);
  w.last_throughput = static_cast<double>(e.batch) / w.ewma_s;
  return Status::ok();
}

Status Controller::report(const AvailabilityChange& e) {
  if (e.worker >= workers_.size()) {
    return Status::invalid_argument("AvailabilityChange: unknown worker " + std::to_string(e.worker));
  }
  if (!(e.fraction >= 0.0 && e.fraction <= 1.0)) {
    return Status::invalid_argument("AvailabilityChange: fraction must be in [0, 1], got " + std::to_string(e.fraction));
  }
  WorkerState& w = workers_[e.worker];
  if (e.fraction == 0.0) {
    set_live(e.worker, false);
    return Status::ok();
  }
  if (!w.live) {
    set_live(e.worker, true);
    return Status::ok();
  }
  // The worker's speed changed: earlier measurements describe another machine.
  w.samples = 0;
  w.ewma_s = 0.0;
  w.history.clear();
  w.disturbed = true;
  return Status::ok();
}

Status Controller::report(const MembershipChange& e) {
  if (e.worker >= workers_.size()) {
    return Status::invalid_argument("MembershipChange: unknown worker " + std::to_string(e.worker));
  }
  set_live(e.worker, e.joined);
  return Status::ok();
}

void Controller::set_live(WorkerId worker, bool live) {
  WorkerState& w = workers_[worker];
  if (w.live == live) return;
  w.live = live;
  w.samples = 0;
  w.ewma_s = 0.0;
  w.history.clear();
  w.previous_batch = 0;
  w.previous_throughput = 0.0;
  membership_dirty_ = true;
}

std::optional<double> Controller::imbalance() const {
  double sum = 0.0;
  int n = 0;
  for (const WorkerState& w : workers_) {
    if (!w.live) continue;
    if (w.samples == 0) return std::nullopt;
    sum += w.ewma_s;
    ++n;
  }
  if (n == 0) return std::nullopt;
  const double mean = sum / n;
  double worst = 0.0;
  for (const WorkerState& w : workers_) {
    if (w.live) worst = std::max(worst, std::abs(w.ewma_s - mean) / mean);
  }
  return worst;
}

bool Controller::decision_due(const DecisionPoint& at, std::optional<double> imb) const {
  if (!imb) return false;  // wait until every live worker has been measured at its current batch
  switch (options_.trigger) {
    case DecisionTrigger::kEveryNIterations: return at.step - last_decision_step_ >= options_.every_n;
    case DecisionTrigger::kEveryEpoch: return at.epoch > last_decision_epoch_;
    case DecisionTrigger::kImbalance:
      return at.step - last_decision_step_ >= options_.every_n && *imb >= options_.imbalance_threshold;
  }
  return false;
}

void Controller::apply_memory_guard() {
  if (!options_.memory_guard) return;
  BatchSize sum_hi = 0;
  for (const WorkerState& w : workers_) sum_hi += w.live ? w.hi : 0;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    WorkerState& w = workers_[k];
    const BatchSize b = plan_.batch[k];
    if (!w.live || w.disturbed || w.samples == 0 || w.previous_throughput <= 0.0 || b <= w.previous_batch) continue;
    const double now = static_cast<double>(b) / w.ewma_s;
    if (now >= w.previous_throughput * (1.0 - options_.memory_guard_tolerance)) continue;
    const BatchSize new_hi = std::max(w.spec.lo, w.previous_batch);
    // Never lower a bound so far that the live workers can no longer hold B.
    if (options_.mode == TrainingMode::kBsp && sum_hi - (w.hi - new_hi) < options_.global_batch) continue;
    sum_hi -= w.hi - new_hi;
    w.hi = new_hi;
  }
}

void Controller::close_measurement_period(std::size_t k) {
  WorkerState& w = workers_[k];
  if (w.samples == 0) return;
  w.history.push_back(Observation{plan_.batch[k], w.ewma_s});
  if (w.history.size() > options_.history_length) w.history.erase(w.history.begin());
}

void Controller::install(const std::vector<BatchSize>& batch, const DecisionPoint& at) {
  BatchSize sum = 0;
  for (BatchSize b : batch) sum += b;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    WorkerState& w = workers_[k];
    if (batch[k] == plan_.batch[k]) continue;
    close_measurement_period(k);
    w.previous_batch = plan_.batch[k];
    w.previous_throughput = w.samples > 0 ? static_cast<double>(plan_.batch[k]) / w.ewma_s : 0.0;
    w.samples = 0;
    w.ewma_s = 0.0;
    w.disturbed = false;
  }
  plan_.batch = batch;
  plan_.global_batch = sum;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    plan_.weight[k] = sum > 0 ? static_cast<double>(batch[k]) / static_cast<double>(sum) : 0.0;
  }
  plan_.step = at.step;
  plan_.time_s = at.now_s;
}

Result<Plan> Controller::plan_next(const DecisionPoint& at) {
  const std::optional<double> measured = imbalance();
  const double imb = measured.value_or(0.0);
  if (!membership_dirty_ && !decision_due(at, measured)) {
    Plan p = plan_;
    p.decided = false;
    p.changed = false;
    p.reason = PlanReason::kNotDue;
    p.imbalance = imb;
    return p;
  }
  apply_memory_guard();
  const BatchSize total = effective_global_batch();
  const BatchPlan proposal = policy_->decide(snapshot(at.step, at.now_s));
  OMNI_RETURN_IF_ERROR(validate_plan(proposal, total));
  last_decision_step_ = at.step;
  last_decision_epoch_ = at.epoch;
  const bool forced = membership_dirty_;
  membership_dirty_ = false;

  double largest_change = 0.0;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const BatchSize before = plan_.batch[k];
    if (before > 0 && proposal.batch[k] > 0) {
      largest_change = std::max(largest_change, std::abs(static_cast<double>(proposal.batch[k] - before)) /
                                                    static_cast<double>(before));
    }
  }
  const bool differs = proposal.batch != plan_.batch;
  PlanReason reason = forced ? PlanReason::kMembership : PlanReason::kScheduled;
  bool changed = false;
  if (differs && !forced && largest_change < options_.dead_band) {
    reason = PlanReason::kHeldByDeadBand;
  } else if (differs) {
    install(proposal.batch, at);
    changed = true;
  }
  Plan p = plan_;
  p.step = at.step;
  p.time_s = at.now_s;
  p.decided = true;
  p.changed = changed;
  p.reason = reason;
  p.imbalance = imb;
  return p;
}

}  // namespace omnilearn::controller
