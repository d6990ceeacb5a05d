// Step frequencies: the frequency factor each BSP worker computes at in a step, under the power model of the
// `energy:` section (docs/energy.md): a worker at factor f computes c / f seconds (c: its time at full speed) and
// draws idle + (busy - idle) * f^power_exponent meanwhile; after its computation it waits for the step's slowest at its
// wait power. Two rules, one home: Perseus-like slowing of the workers with slack (the step unchanged), and energy
// traded against time within a step (energy.objective). Pure functions: thread-safe.
#pragma once

#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/energy_spec.h"

namespace omnilearn::run {

// The frequency-power law (docs/energy.md): a device computing at factor `frequency` of its full speed draws
// idle_w + (busy_w - idle_w) * frequency^exponent. The one home of the law; every charge of a slowed phase uses it.
double power_at_frequency_w(double idle_w, double busy_w, double frequency, double exponent);

// slow_with_slack: the factor at which a worker that computes `compute_s` and then waits `wait_s` arrives with the
// slowest, compute / (compute + wait), but not below `min_frequency`.
double slack_frequency(Seconds compute_s, Seconds wait_s, double min_frequency);

// One participant of a step: its compute time at full speed and its node's power in watts (scaled by its
// availability, as the share rule charges it).
struct StepWorker {
  Seconds compute_s = 0.0;
  double idle_w = 0.0, busy_w = 0.0, wait_w = 0.0;
};

struct StepFrequencies {
  std::vector<double> frequency;  // per StepWorker, in [min_frequency, 1]
  Seconds compute_phase_s = 0.0;  // max_k compute_k / frequency_k: when the all-reduce starts
  double energy_j = 0.0;          // the compute phase's energy (below) at these factors
  double least_energy_j = 0.0;    // the least the compute phase can take at any factors
};

// The energy of a step's compute phase of length `phase_s` (at least the largest compute time): every participant's
// computing and its waiting until `phase_s`, at the factors that minimise it (the slowest participant at
// max compute / phase_s, so that the phase is that long; each other one at its own best factor), plus `other_w`
// (what the workers outside the step draw) over the phase. Fills `frequency` when not null.
double compute_phase_energy(const std::vector<StepWorker>& workers, double other_w, Seconds phase_s,
                            const scenarios::EnergySpec& model, std::vector<double>* frequency = nullptr);

// energy.objective over one step: phase lengths from the largest compute time (no one slowed) to it over
// min_frequency (the slowest at min_frequency). energy_within X: the shortest phase whose energy is at most
// (1 + X/100) x the least; time_within Y: the least energy among phases at most (1 + Y/100) x the shortest. The
// communication after the phase does not depend on the factors and is left out. Without an objective, or with fewer
// than one participant that computes, every factor is 1.
StepFrequencies choose_step_frequencies(const std::vector<StepWorker>& workers, double other_w,
                                        const scenarios::EnergySpec& model);

}  // namespace omnilearn::run
