#include "omnilearn/traces/trace_generators.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "omnilearn/base/check.h"
#include "omnilearn/base/format.h"
#include "omnilearn/base/input_limits.h"
#include "portable_random.h"

namespace omnilearn::traces {
namespace {

using detail::exponential;
using detail::uniform01;

// Standard normal (Box-Muller) from two portable uniforms.
double normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform01(rng);  // (0, 1]
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::string worker_label(std::size_t j) { std::string s = "w";
  s += std::to_string(j);
  return s; }

Status check_common(std::size_t workers, Seconds duration_s) {
  if (workers == 0) return Status::invalid_argument("generator: workers is 0; expected at least 1");
  if (workers > limits::kMaxWorkers) {
    return Status::invalid_argument("generator: workers is " + std::to_string(workers) + "; expected at most " +
                                    std::to_string(limits::kMaxWorkers));
  }
  if (!std::isfinite(duration_s) || duration_s <= 0.0) {
    return Status::invalid_argument("generator: duration_s is invalid; expected > 0");
  }
  return Status::ok();
}

// Checked before anything is generated: workers x duration / step points must stay within the limit.
Status check_points(const char* generator, std::size_t workers, Seconds duration_s, Seconds step_s) {
  const double points = static_cast<double>(workers) * std::ceil(duration_s / step_s);
  if (points > static_cast<double>(limits::kMaxTracePoints)) {
    return Status::invalid_argument(std::string(generator) + ": step_s " + format_g(step_s, 6) + " over duration_s " +
                                    format_g(duration_s, 6) + " for " + std::to_string(workers) + " workers gives " +
                                    format_g(points, 6) + " trace points; expected at most " +
                                    std::to_string(limits::kMaxTracePoints) + " (a longer step or a shorter duration)");
  }
  return Status::ok();
}

}  // namespace

std::vector<int> hl_cores(int level) {
  switch (level) {
    case 1: return {12, 12, 12, 12};
    case 2: return {12, 12, 8, 16};
    case 4: return {9, 8, 6, 25};
    case 8: return {6, 6, 4, 32};
    default: OMNI_CHECK(false, "HL level must be 1, 2, 4 or 8");
  }
  return {};
}

std::vector<int> hl_dynamic_levels() {
  std::vector<int> levels;
  for (const auto& [level, count] : {std::pair{1, 5}, {2, 5}, {4, 5}, {8, 10}, {4, 5}, {2, 5}, {1, 10}}) {
    levels.insert(levels.end(), static_cast<std::size_t>(count), level);
  }
  return levels;
}

Result<AvailabilityTrace> generate_hl_schedule(const HlScheduleOptions& options) {
  if (!std::isfinite(options.epoch_s) || options.epoch_s <= 0.0) {
    return Status::invalid_argument("hl: epoch_s is invalid; expected > 0");
  }
  std::vector<int> levels;
  switch (options.routine) {
    case HlRoutine::kDynamic: levels = hl_dynamic_levels(); break;
    default: {
      if (options.epochs <= 0) return Status::invalid_argument("hl: epochs is invalid; expected > 0");
      const int level = options.routine == HlRoutine::kHl1   ? 1
                        : options.routine == HlRoutine::kHl2 ? 2
                        : options.routine == HlRoutine::kHl4 ? 4
                                                             : 8;
      levels.assign(static_cast<std::size_t>(options.epochs), level);
    }
  }
  std::vector<int> max_cores(4, 0);
  for (int level : {1, 2, 4, 8}) {
    const std::vector<int> c = hl_cores(level);
    for (std::size_t k = 0; k < 4; ++k) max_cores[k] = std::max(max_cores[k], c[k]);
  }
  std::vector<WorkerSeries> workers(4);
  for (std::size_t k = 0; k < 4; ++k) workers[k].name = worker_label(k);
  for (std::size_t e = 0; e < levels.size(); ++e) {
    if (e > 0 && levels[e] == levels[e - 1]) continue;
    const std::vector<int> c = hl_cores(levels[e]);
    for (std::size_t k = 0; k < 4; ++k) {
      workers[k].points.push_back(
          {static_cast<double>(e) * options.epoch_s, static_cast<double>(c[k]) / max_cores[k]});
    }
  }
  return AvailabilityTrace::create(std::move(workers), static_cast<double>(levels.size()) * options.epoch_s);
}

Result<AvailabilityTrace> generate_markov_on_off(const MarkovOptions& o) {
  OMNI_RETURN_IF_ERROR(check_common(o.workers, o.duration_s));
  if (!(o.mtbf_s > 0.0) || !(o.mttr_s > 0.0) || !std::isfinite(o.mtbf_s) || !std::isfinite(o.mttr_s)) {
    return Status::invalid_argument("markov: mtbf_s and mttr_s must be > 0");
  }
  if (!(o.up_fraction > 0.0) || o.up_fraction > 1.0) {
    return Status::invalid_argument("markov: up_fraction must be in (0,1]");
  }
  // The expected points are 2 x duration / (mtbf + mttr) per worker; the count is checked as they are drawn too.
  OMNI_RETURN_IF_ERROR(check_points("markov", o.workers, o.duration_s, (o.mtbf_s + o.mttr_s) / 2.0));
  std::mt19937_64 rng(o.seed);
  std::vector<WorkerSeries> workers;
  std::size_t points = 0;
  for (std::size_t k = 0; k < o.workers; ++k) {
    WorkerSeries s{worker_label(k), {{0.0, o.up_fraction}}};
    Seconds t = 0.0;
    bool up = true;
    while (true) {
      t += exponential(rng, up ? o.mtbf_s : o.mttr_s);
      if (t >= o.duration_s) break;
      up = !up;
      if (t > s.points.back().time_s) s.points.push_back({t, up ? o.up_fraction : 0.0});
      if (++points > limits::kMaxTracePoints) {
        return Status::invalid_argument("markov: mtbf_s and mttr_s give more than " +
                                        std::to_string(limits::kMaxTracePoints) +
                                        " trace points; expected at most that many (longer periods)");
      }
    }
    workers.push_back(std::move(s));
  }
  return AvailabilityTrace::create(std::move(workers), o.duration_s);
}

Result<AvailabilityTrace> generate_random_walk(const RandomWalkOptions& o) {
  OMNI_RETURN_IF_ERROR(check_common(o.workers, o.duration_s));
  if (!(o.step_s > 0.0) || !(o.sigma >= 0.0) || !(o.min_fraction >= 0.0) || !(o.max_fraction <= 1.0) ||
      !(o.min_fraction < o.max_fraction) || o.start < o.min_fraction || o.start > o.max_fraction) {
    return Status::invalid_argument(
        "random walk: expected step_s > 0, sigma >= 0, 0 <= min_fraction < max_fraction <= 1, start within");
  }
  OMNI_RETURN_IF_ERROR(check_points("random walk", o.workers, o.duration_s, o.step_s));
  std::mt19937_64 rng(o.seed);
  const double lo = o.min_fraction;
  const double hi = o.max_fraction;
  std::vector<WorkerSeries> workers;
  for (std::size_t k = 0; k < o.workers; ++k) {
    WorkerSeries s{worker_label(k), {}};
    double v = o.start;
    for (std::size_t i = 0; static_cast<double>(i) * o.step_s < o.duration_s; ++i) {
      if (i > 0) {
        v += o.sigma * normal(rng);
        // Reflect at the bounds (several times for a step longer than the range).
        for (int r = 0; r < 8 && (v < lo || v > hi); ++r) v = v < lo ? 2 * lo - v : 2 * hi - v;
        v = std::clamp(v, lo, hi);
      }
      s.points.push_back({static_cast<double>(i) * o.step_s, v});
    }
    workers.push_back(std::move(s));
  }
  return AvailabilityTrace::create(std::move(workers), o.duration_s);
}

Result<AvailabilityTrace> generate_diurnal(const DiurnalOptions& o) {
  OMNI_RETURN_IF_ERROR(check_common(o.workers, o.duration_s));
  if (!(o.period_s > 0.0) || !(o.step_s > 0.0) || !(o.amplitude >= 0.0) || !(o.mean >= 0.0) || o.mean > 1.0 ||
      !(o.phase_jitter >= 0.0)) {
    return Status::invalid_argument("diurnal: expected period_s > 0, step_s > 0, amplitude >= 0, mean in [0,1]");
  }
  OMNI_RETURN_IF_ERROR(check_points("diurnal", o.workers, o.duration_s, o.step_s));
  std::mt19937_64 rng(o.seed);
  std::vector<WorkerSeries> workers;
  for (std::size_t k = 0; k < o.workers; ++k) {
    const double phase = o.phase_jitter * uniform01(rng);
    WorkerSeries s{worker_label(k), {}};
    for (std::size_t i = 0; static_cast<double>(i) * o.step_s < o.duration_s; ++i) {
      const Seconds t = static_cast<double>(i) * o.step_s;
      const double v = o.mean - o.amplitude * std::sin(2.0 * std::numbers::pi * (t / o.period_s + phase));
      s.points.push_back({t, std::clamp(v, 0.0, 1.0)});
    }
    workers.push_back(std::move(s));
  }
  return AvailabilityTrace::create(std::move(workers), o.duration_s);
}

}  // namespace omnilearn::traces
