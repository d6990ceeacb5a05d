// Step frequencies: how fast each BSP worker computes in a step, under the power model of the `energy:` section
// (docs/energy.md). A worker slows either in discrete states that were measured (a GPU's power limits from Zeus's
// table, a platform host's pstates: each a time ratio and a power) or, where none exists, by a factor f of the assumed
// law: c / f seconds (c: its time at full speed) at idle + (busy - idle) * f^power_exponent. After its computation it
// waits for the step's slowest at its wait power. Two rules, one home: Perseus-like slowing of the workers with slack,
// and energy traded against time within a step (energy.objective); each decided on the step's own times (oracle) or
// on the times of the steps before it (previous: StepTimePredictor, decide_step). Pure functions and a plain value
// class: not thread-safe to share a predictor.
#pragma once

#include <cstddef>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/energy_spec.h"

namespace omnilearn::run {

// The frequency-power law (docs/energy.md): a device computing at factor `frequency` of its full speed draws
// idle_w + (busy_w - idle_w) * frequency^exponent. The one home of the law; every charge of a law-slowed phase uses it.
double power_at_frequency_w(double idle_w, double busy_w, double frequency, double exponent);

// slow_with_slack under the law: the factor at which a worker that computes `compute_s` and then waits `wait_s`
// arrives with the slowest, compute / (compute + wait), but not below `min_frequency`.
double slack_frequency(Seconds compute_s, Seconds wait_s, double min_frequency);

// The law's factors as discrete states when decided on earlier steps (previous): rounded up to this grid (a CPU's
// DVFS steps are about 5% of its top frequency), so that a decision is a state a real governor could set.
inline constexpr double kLawStateStep = 0.05;
double law_state(double frequency, double min_frequency);

// One discrete slowing state that was measured: computing takes `slowdown` (>= 1) x the full-speed time at `busy_w`
// (the node's watts, before the share rule). `level` names it for switch counting: the power limit in W, the pstate.
struct PowerState {
  double slowdown = 1.0;
  double busy_w = 0.0;
  double level = 0.0;
};

// One participant of a step: its compute time at full speed and its node's power in watts (scaled by its
// availability, as the share rule charges it). `states`: its measured slowing states (full speed not among them);
// empty: the law.
struct StepWorker {
  Seconds compute_s = 0.0;
  double idle_w = 0.0, busy_w = 0.0, wait_w = 0.0;
  std::vector<PowerState> states;
  double spread = 0.0;  // decide_step: the relative spread of a predicted compute_s (StepTimePredictor::spread)
};

// slow_with_slack in measured states: the state of least energy (computing at its power, then waiting at wait_w until
// compute + wait) among those that end by then; -1 (full speed) when none uses less than full speed.
int slack_state(const StepWorker& w, Seconds wait_s);

struct StepFrequencies {
  std::vector<double> frequency;  // per StepWorker, in (0, 1]: it computes compute_s / frequency
  std::vector<int> state;         // per StepWorker: its index in `states`, or -1 (full speed, or the law)
  Seconds compute_phase_s = 0.0;  // max_k compute_k / frequency_k: when the all-reduce starts
  double energy_j = 0.0;          // the compute phase's energy (below) at these factors
  double least_energy_j = 0.0;    // the least the compute phase can take at any factors
};

// The energy of a step's compute phase of length `phase_s` (at least the largest compute time): every participant's
// computing and its waiting until `phase_s`, at the factors that minimise it (a law worker that is the slowest at
// max compute / phase_s, so that the phase is that long; every other one at its own best factor or measured state
// that ends within the phase), plus `other_w` (what the workers outside the step draw) over the phase. Fills
// `frequency` and `state` when not null.
double compute_phase_energy(const std::vector<StepWorker>& workers, double other_w, Seconds phase_s,
                            const scenarios::EnergySpec& model, std::vector<double>* frequency = nullptr,
                            std::vector<int>* state = nullptr);

// energy.objective over one step: phase lengths from the largest compute time (no one slowed) to the longest any
// slowing gives (the law's min_frequency, the slowest measured state). With measured states only, the candidates
// are the ends the states give; otherwise a grid refined by golden section. energy_within X: the shortest phase
// whose energy is at most (1 + X/100) x the least; time_within Y: the least energy among phases at most
// (1 + Y/100) x the shortest. The communication after the phase does not depend on the factors and is left out.
// Without an objective, or with no participant that computes, every factor is 1.
StepFrequencies choose_step_frequencies(const std::vector<StepWorker>& workers, double other_w,
                                        const scenarios::EnergySpec& model);

// energy.slowing_decision previous: each worker's full-speed compute time in a step, predicted from the steps before
// it only: an exponentially weighted mean of its measured seconds per sample (kPredictionWeight on the newest), times
// the batch it computes now, and the spread of its relative errors (the same weighting of their squares). Nothing is
// predicted for a worker before its first measured step.
class StepTimePredictor {
 public:
  static constexpr double kPredictionWeight = 0.3;
  explicit StepTimePredictor(std::size_t workers) : per_sample_s_(workers, -1.0), variance_(workers, 0.0) {}
  // Whether worker k has a prediction, and its predicted compute at `batch` (call only when it has).
  bool has(std::size_t k) const { return per_sample_s_[k] > 0.0; }
  Seconds predict(std::size_t k, double batch) const { return per_sample_s_[k] * batch; }
  // The root of the weighted mean squared relative error of its predictions so far (0 before a second step).
  double spread(std::size_t k) const;
  // Worker k computed `batch` samples in `full_speed_s` at full speed in a step now over.
  void observe(std::size_t k, double batch, Seconds full_speed_s);

 private:
  std::vector<double> per_sample_s_;  // -1: none yet
  std::vector<double> variance_;
};

// A step's slowing decided on `predicted` compute times (StepWorker::compute_s; 0 for a worker without a prediction,
// which then computes at full speed): energy.objective's rule (choose_step_frequencies) when the model has one, else
// slow_with_slack's with the predicted slowest's time as the end (slack_state, or the law's factor). Every worker but
// the predicted slowest decides as if it computed kGuardSpreads x sqrt(its spread^2 + the slowest's spread^2) longer
// than predicted, so that noise seldom makes a slowed worker the last (1.2: the setting that kept the noisy HL8
// study's extra time under 1% with the most saving, docs/energy.md). Law factors are rounded up to law_state's grid.
// frequency 1 and state -1 where a worker is not slowed.
inline constexpr double kGuardSpreads = 1.2;
StepFrequencies decide_step(const std::vector<StepWorker>& predicted, double other_w,
                            const scenarios::EnergySpec& model);

}  // namespace omnilearn::run
