// Synthetic availability traces: the paper's heterogeneity-level (HL) routines, Markov on/off failures, a
// bounded random walk and diurnal load. Deterministic for a seed (std::mt19937_64 and portable
// transforms, identical across runs and platforms). Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/availability_trace.h"

namespace omnilearn::traces {

// The paper's 4-worker levels: HL1 12/12/12/12, HL2 12/12/8/16, HL4 9/8/6/25, HL8 6/6/4/32 cores.
enum class HlRoutine { kHl1, kHl2, kHl4, kHl8, kDynamic };

// Cores of each of the 4 workers at level 1, 2, 4 or 8 (checked).
std::vector<int> hl_cores(int level);
// The dynamic routine's level per epoch: HL1 epochs 0-4, HL2 5-9, HL4 10-14, HL8 15-24, HL4 25-29,
// HL2 30-34, HL1 35-44 (45 epochs).
std::vector<int> hl_dynamic_levels();

struct HlScheduleOptions {
  HlRoutine routine = HlRoutine::kDynamic;
  // Length of one epoch. With 1.0 a change time reads as an epoch index (an epoch schedule).
  Seconds epoch_s = 1.0;
  // Epochs covered by a static routine (kHl1..kHl8); the dynamic routine always covers 45.
  int epochs = 45;
};
// Workers w0..w3. A worker's fraction is its cores divided by the most cores it gets at any level
// (12, 12, 12, 32), so every level is expressed against one fixed platform.
Result<AvailabilityTrace> generate_hl_schedule(const HlScheduleOptions& options);

struct MarkovOptions {
  std::size_t workers = 4;
  Seconds duration_s = 3600.0;
  Seconds mtbf_s = 600.0;  // mean up time (exponential)
  Seconds mttr_s = 60.0;   // mean down time (exponential)
  double up_fraction = 1.0;
  std::uint64_t seed = 1;
};
// Every worker starts up and alternates exponential up and down periods; long-run availability is
// mtbf / (mtbf + mttr).
Result<AvailabilityTrace> generate_markov_on_off(const MarkovOptions& options);

struct RandomWalkOptions {
  std::size_t workers = 4;
  Seconds duration_s = 3600.0;
  Seconds step_s = 10.0;
  double start = 1.0;
  double sigma = 0.05;  // standard deviation of one step
  double min_fraction = 0.2;
  double max_fraction = 1.0;
  std::uint64_t seed = 1;
};
// Drifting interference: every step adds N(0, sigma), reflected into [min_fraction, max_fraction].
Result<AvailabilityTrace> generate_random_walk(const RandomWalkOptions& options);

struct DiurnalOptions {
  std::size_t workers = 4;
  Seconds duration_s = 86400.0;
  Seconds period_s = 86400.0;
  Seconds step_s = 300.0;
  double mean = 0.7;        // mean availability
  double amplitude = 0.25;  // availability swings mean +- amplitude (clipped to [0,1])
  double phase_jitter = 0.1;  // per-worker phase offset, uniform in [0, phase_jitter) periods
  std::uint64_t seed = 1;
};
// Background load with a daily cycle: fraction(t) = mean - amplitude * sin(2 pi (t / period + phase_k)),
// sampled every step.
Result<AvailabilityTrace> generate_diurnal(const DiurnalOptions& options);

}  // namespace omnilearn::traces
