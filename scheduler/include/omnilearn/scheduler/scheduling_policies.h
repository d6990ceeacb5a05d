// Factories for the built-in scheduling policies (docs/scheduler.md has each rule and its source). Each returns a
// fresh, independent instance, or an error naming the option at fault.
#pragma once

#include <memory>

#include "omnilearn/base/status.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::scheduler {

// First come, first served, no preemption, EASY backfilling behind the first job that does not fit (a reservation
// keeps it from starving); each job starts on the fastest kind (for its model) that holds it.
Result<std::unique_ptr<SchedulingPolicy>> make_fifo_policy(const SchedulerOptions& options);
// The heterogeneity-blind baseline: FIFO without backfilling, kinds chosen by free devices, speeds unseen.
Result<std::unique_ptr<SchedulingPolicy>> make_fifo_blind_policy(const SchedulerOptions& options);
// Tiresias's discretised two-dimensional least-attained-service (attained service = workers x time), preemptive;
// each job starts on the fastest kind (for its model) that holds it.
Result<std::unique_ptr<SchedulingPolicy>> make_las_policy(const SchedulerOptions& options);
// The heterogeneity-blind baseline: LAS with kinds chosen by free devices, speeds unseen.
Result<std::unique_ptr<SchedulingPolicy>> make_las_blind_policy(const SchedulerOptions& options);
// Gavel's heterogeneity-aware max-min fairness: its LP (solved by GLPK) and its round-based mechanism.
Result<std::unique_ptr<SchedulingPolicy>> make_gavel_policy(const SchedulerOptions& options);
// Gavel's max-min fairness with space sharing: the LP over single jobs and packed pairs of one-worker jobs
// (RoundFacts::packed_pairs that gain), rounded by the same mechanism. Packs only with options.packing (without it,
// the same allocations as gavel).
Result<std::unique_ptr<SchedulingPolicy>> make_gavel_packed_policy(const SchedulerOptions& options);
// Goodput in Pollux's spirit (Qiao et al., OSDI 2021): each round, every job's device count (and, where the facts
// give its goodput by count, its batch) for the most cluster goodput under Pollux's fairness (a power mean of the
// jobs' speedups with p = -1), by a greedy marginal allocation rather than Pollux's genetic algorithm.
Result<std::unique_ptr<SchedulingPolicy>> make_goodput_policy(const SchedulerOptions& options);
// Ours: LAS's order, devices valued at each job's effective throughput, mixed kinds for jobs that balance batches.
Result<std::unique_ptr<SchedulingPolicy>> make_balanced_mix_policy(const SchedulerOptions& options);

}  // namespace omnilearn::scheduler
