#include "omnilearn/run/step_frequency.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace omnilearn::run {
namespace {

// Evaluations of the phase length's grid before the golden-section search refines the best one; enough to bracket
// the least energy of the sums of convex terms met here (docs/energy.md), few enough for thousands of steps.
constexpr int kGrid = 64;
constexpr int kRefinements = 100;

// A worker's energy over a compute phase of `phase_s` at factor f: computing compute / f, then waiting.
double worker_energy(const StepWorker& w, double f, Seconds phase_s, double exponent) {
  const Seconds busy_s = w.compute_s / f;
  return busy_s * power_at_frequency_w(w.idle_w, w.busy_w, f, exponent) + (phase_s - busy_s) * w.wait_w;
}

// The same in measured state `s` (-1: full speed).
double state_energy(const StepWorker& w, int s, Seconds phase_s) {
  const double slowdown = s < 0 ? 1.0 : w.states[static_cast<std::size_t>(s)].slowdown;
  const double power = s < 0 ? w.busy_w : w.states[static_cast<std::size_t>(s)].busy_w;
  const Seconds busy_s = w.compute_s * slowdown;
  return busy_s * power + (phase_s - busy_s) * w.wait_w;
}

// The measured state of least energy over a phase of `phase_s` among those that end within it; -1: full speed. A tie
// keeps the faster state (states are tried in their order after full speed).
int best_state(const StepWorker& w, Seconds phase_s) {
  int best = -1;
  double least = state_energy(w, -1, phase_s);
  for (std::size_t s = 0; s < w.states.size(); ++s) {
    if (w.compute_s * w.states[s].slowdown > phase_s * (1.0 + 1e-12)) continue;
    const double e = state_energy(w, static_cast<int>(s), phase_s);
    if (e < least) best = static_cast<int>(s), least = e;
  }
  return best;
}

// The factor in [lo, 1] that minimises worker_energy: an end, or where its derivative in f vanishes,
// f^exponent = (idle - wait) / ((busy - idle)(exponent - 1)) (only when waiting draws less than idle). A tie keeps
// the higher factor.
double best_factor(const StepWorker& w, double lo, Seconds phase_s, double exponent) {
  double best = 1.0, least = worker_energy(w, 1.0, phase_s, exponent);
  const auto consider = [&](double f) {
    if (!(f >= lo && f < 1.0)) return;
    const double e = worker_energy(w, f, phase_s, exponent);
    if (e < least) best = f, least = e;
  };
  const double a = w.idle_w - w.wait_w, b = (w.busy_w - w.idle_w) * (exponent - 1.0);
  if (a > 0.0 && b > 0.0) consider(std::pow(a / b, 1.0 / exponent));
  consider(lo);
  return best;
}

struct Point {
  Seconds phase_s = 0.0;
  double energy_j = 0.0;
};

// The phase length in [lo, hi] of least energy: the best of a grid, refined by a golden-section search between its
// neighbours. A tie keeps the shorter phase.
template <typename F>
Point least_energy(const F& energy, Seconds lo, Seconds hi) {
  Point best{lo, energy(lo)};
  if (!(hi > lo)) return best;
  const Seconds step = (hi - lo) / kGrid;
  int at = 0;
  for (int i = 1; i <= kGrid; ++i) {
    const Seconds t = i == kGrid ? hi : lo + step * i;
    const double e = energy(t);
    if (e < best.energy_j) best = {t, e}, at = i;
  }
  Seconds a = lo + step * std::max(at - 1, 0), b = std::min(hi, lo + step * (at + 1));
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  Seconds c = b - ratio * (b - a), d = a + ratio * (b - a);
  double ec = energy(c), ed = energy(d);
  for (int i = 0; i < kRefinements && b - a > 1e-15 * b; ++i) {
    if (ec <= ed) {
      b = d, d = c, ed = ec;
      c = b - ratio * (b - a), ec = energy(c);
    } else {
      a = c, c = d, ec = ed;
      d = a + ratio * (b - a), ed = energy(d);
    }
  }
  const Point refined = ec <= ed ? Point{c, ec} : Point{d, ed};
  if (refined.energy_j < best.energy_j) best = refined;
  return best;
}

}  // namespace

double power_at_frequency_w(double idle_w, double busy_w, double frequency, double exponent) {
  return idle_w + (busy_w - idle_w) * std::pow(frequency, exponent);
}

double slack_frequency(Seconds compute_s, Seconds wait_s, double min_frequency) {
  return std::max(min_frequency, compute_s / (compute_s + wait_s));
}

double law_state(double frequency, double min_frequency) {
  const double up = std::ceil(frequency / kLawStateStep - 1e-9) * kLawStateStep;
  return std::clamp(up, min_frequency, 1.0);
}

int slack_state(const StepWorker& w, Seconds wait_s) {
  if (!(w.compute_s > 0.0) || !(wait_s > 0.0)) return -1;
  return best_state(w, w.compute_s + wait_s);
}

double StepTimePredictor::spread(std::size_t k) const { return std::sqrt(variance_[k]); }

void StepTimePredictor::observe(std::size_t k, double batch, Seconds full_speed_s) {
  if (!(batch > 0.0) || !(full_speed_s > 0.0)) return;
  const double x = full_speed_s / batch;
  if (!(per_sample_s_[k] > 0.0)) {
    per_sample_s_[k] = x;
    return;
  }
  const double error = x / per_sample_s_[k] - 1.0;
  variance_[k] = kPredictionWeight * error * error + (1.0 - kPredictionWeight) * variance_[k];
  per_sample_s_[k] = kPredictionWeight * x + (1.0 - kPredictionWeight) * per_sample_s_[k];
}

StepFrequencies decide_step(const std::vector<StepWorker>& unguarded, double other_w,
                            const scenarios::EnergySpec& model) {
  std::size_t slowest = 0;
  for (std::size_t k = 1; k < unguarded.size(); ++k) {
    if (unguarded[k].compute_s > unguarded[slowest].compute_s) slowest = k;
  }
  std::vector<StepWorker> predicted = unguarded;
  for (std::size_t k = 0; k < predicted.size(); ++k) {
    if (k == slowest) continue;
    const double s = unguarded[k].spread, t = unguarded[slowest].spread;
    predicted[k].compute_s = std::min(unguarded[slowest].compute_s,
                                      unguarded[k].compute_s * (1.0 + kGuardSpreads * std::sqrt(s * s + t * t)));
  }
  StepFrequencies out;
  if (model.objective) {
    out = choose_step_frequencies(predicted, other_w, model);
  } else {
    out.frequency.assign(predicted.size(), 1.0);
    out.state.assign(predicted.size(), -1);
    Seconds end_s = 0.0;
    for (const StepWorker& w : predicted) end_s = std::max(end_s, w.compute_s);
    out.compute_phase_s = end_s;
    for (std::size_t k = 0; k < predicted.size(); ++k) {
      const StepWorker& w = predicted[k];
      if (!(w.compute_s > 0.0) || !(w.compute_s < end_s)) continue;
      if (!w.states.empty()) {
        out.state[k] = slack_state(w, end_s - w.compute_s);
        if (out.state[k] >= 0) out.frequency[k] = 1.0 / w.states[static_cast<std::size_t>(out.state[k])].slowdown;
      } else {
        out.frequency[k] = slack_frequency(w.compute_s, end_s - w.compute_s, model.min_frequency);
      }
    }
  }
  for (std::size_t k = 0; k < predicted.size(); ++k) {
    if (predicted[k].states.empty() && out.frequency[k] < 1.0) {
      out.frequency[k] = law_state(out.frequency[k], model.min_frequency);
    }
  }
  return out;
}

double compute_phase_energy(const std::vector<StepWorker>& workers, double other_w, Seconds phase_s,
                            const scenarios::EnergySpec& model, std::vector<double>* frequency,
                            std::vector<int>* state) {
  std::size_t slowest = 0;
  for (std::size_t k = 1; k < workers.size(); ++k) {
    if (workers[k].compute_s > workers[slowest].compute_s) slowest = k;
  }
  if (frequency != nullptr) frequency->assign(workers.size(), 1.0);
  if (state != nullptr) state->assign(workers.size(), -1);
  double joules = other_w * phase_s;
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const StepWorker& w = workers[k];
    if (!w.states.empty()) {
      const int s = w.compute_s > 0.0 ? best_state(w, phase_s) : -1;
      joules += state_energy(w, s, phase_s);
      if (frequency != nullptr && s >= 0) (*frequency)[k] = 1.0 / w.states[static_cast<std::size_t>(s)].slowdown;
      if (state != nullptr) (*state)[k] = s;
      continue;
    }
    double f = 1.0;
    if (w.compute_s > 0.0) {
      const double lo = std::clamp(w.compute_s / phase_s, model.min_frequency, 1.0);
      f = k == slowest ? lo : best_factor(w, lo, phase_s, model.power_exponent);
    }
    joules += worker_energy(w, f, phase_s, model.power_exponent);
    if (frequency != nullptr) (*frequency)[k] = f;
  }
  return joules;
}

namespace {

// The phase lengths a step of measured states only can end at: every state's end of every worker, from the shortest.
std::vector<Seconds> state_ends(const std::vector<StepWorker>& workers, Seconds shortest) {
  std::vector<Seconds> ends{shortest};
  for (const StepWorker& w : workers) {
    for (const PowerState& s : w.states) {
      if (w.compute_s * s.slowdown > shortest) ends.push_back(w.compute_s * s.slowdown);
    }
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

// energy.objective's rule over a finite set of phase lengths (ascending, the shortest first).
Seconds choose_among(const std::vector<Seconds>& ends, const std::vector<double>& energy,
                     const scenarios::EnergyObjective& objective, double* least_j) {
  const double within = objective.percent / 100.0;
  *least_j = *std::min_element(energy.begin(), energy.end());
  if (objective.kind == scenarios::EnergyObjective::Kind::kTimeWithin) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < ends.size() && ends[i] <= ends[0] * (1.0 + within); ++i) {
      if (energy[i] < energy[best]) best = i;
    }
    return ends[best];
  }
  for (std::size_t i = 0; i < ends.size(); ++i) {
    if (energy[i] <= *least_j * (1.0 + within)) return ends[i];
  }
  return ends.back();
}

}  // namespace

StepFrequencies choose_step_frequencies(const std::vector<StepWorker>& workers, double other_w,
                                        const scenarios::EnergySpec& model) {
  StepFrequencies out;
  out.frequency.assign(workers.size(), 1.0);
  Seconds shortest = 0.0;
  for (const StepWorker& w : workers) shortest = std::max(shortest, w.compute_s);
  out.compute_phase_s = shortest;
  out.state.assign(workers.size(), -1);
  if (!model.objective || !(shortest > 0.0)) return out;
  const bool measured_only = std::all_of(workers.begin(), workers.end(), [](const StepWorker& w) {
    return !w.states.empty() || !(w.compute_s > 0.0);
  });
  if (measured_only) {
    const std::vector<Seconds> ends = state_ends(workers, shortest);
    std::vector<double> energy;
    for (Seconds t : ends) energy.push_back(compute_phase_energy(workers, other_w, t, model));
    double least_j = 0.0;
    const Seconds chosen = choose_among(ends, energy, *model.objective, &least_j);
    out.energy_j = compute_phase_energy(workers, other_w, chosen, model, &out.frequency, &out.state);
    out.compute_phase_s = shortest;
    for (std::size_t k = 0; k < workers.size(); ++k) {
      out.compute_phase_s = std::max(out.compute_phase_s, workers[k].compute_s / out.frequency[k]);
    }
    out.least_energy_j = std::min(least_j, out.energy_j);
    return out;
  }
  const auto energy = [&](Seconds t) { return compute_phase_energy(workers, other_w, t, model); };
  const Seconds longest = shortest / model.min_frequency;
  const Point least = least_energy(energy, shortest, longest);
  const double within = model.objective->percent / 100.0;
  Point chosen;
  if (model.objective->kind == scenarios::EnergyObjective::Kind::kTimeWithin) {
    chosen = least_energy(energy, shortest, std::min(longest, shortest * (1.0 + within)));
  } else {
    const double bound = least.energy_j * (1.0 + within);
    chosen = {shortest, energy(shortest)};
    if (chosen.energy_j > bound) {
      // The first grid point between the shortest phase and the least energy's that is within the bound, then the
      // crossing between it and the one before, by bisection (the energy is continuous in the phase length).
      Seconds lo = shortest, hi = least.phase_s;
      const Seconds step = (least.phase_s - shortest) / kGrid;
      for (int i = 1; i < kGrid; ++i) {
        const Seconds t = shortest + step * i;
        if (energy(t) <= bound) {
          hi = t;
          break;
        }
        lo = t;
      }
      for (int i = 0; i < kRefinements && hi - lo > 1e-15 * hi; ++i) {
        const Seconds mid = 0.5 * (lo + hi);
        (energy(mid) <= bound ? hi : lo) = mid;
      }
      chosen = {hi, energy(hi)};
    }
  }
  out.compute_phase_s = chosen.phase_s;
  out.energy_j = compute_phase_energy(workers, other_w, chosen.phase_s, model, &out.frequency, &out.state);
  out.least_energy_j = std::min(least.energy_j, out.energy_j);
  return out;
}

}  // namespace omnilearn::run
