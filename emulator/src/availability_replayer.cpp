#include "omnilearn/emulator/availability_replayer.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_generators.h"
#include "omnilearn/traces/trace_operations.h"

namespace omnilearn::emulator {
namespace {

using scenarios::AvailabilitySpec;
using traces::AvailabilityTrace;

std::string worker_name(std::size_t k) { return std::string("w").append(std::to_string(k)); }

Result<AvailabilityTrace> from_phases(const AvailabilitySpec& spec, std::size_t workers) {
  std::vector<traces::WorkerSeries> series(workers);
  for (std::size_t k = 0; k < workers; ++k) series[k].name = worker_name(k);
  for (std::size_t i = 0; i < spec.phases.size(); ++i) {
    const scenarios::AvailabilityPhase& phase = spec.phases[i];
    if (phase.fractions.size() != workers) {
      return Status::invalid_argument(std::string("availability.phases[").append(std::to_string(i)).append(
          "]: one value per worker expected"));
    }
    for (std::size_t k = 0; k < workers; ++k) series[k].points.push_back({phase.at, phase.fractions[k]});
  }
  auto trace = AvailabilityTrace::create(std::move(series));
  if (!trace) return trace.status().with_context("availability.phases");
  return trace;
}

std::string resolve_path(const std::string& path, const std::string& scenario_path) {
  namespace fs = std::filesystem;
  if (fs::path(path).is_absolute() || fs::exists(path) || scenario_path.empty()) return path;
  return (fs::path(scenario_path).parent_path() / path).string();
}

Result<AvailabilityTrace> from_reference(const scenarios::TraceReference& ref, std::size_t workers,
                                         const std::string& scenario_path, const std::string& field) {
  auto loaded = traces::read_trace_file(resolve_path(ref.path, scenario_path));
  if (!loaded) return loaded.status().with_context(field + ".path");
  AvailabilityTrace trace = std::move(loaded).value();
  if (ref.window_start_s > 0.0 || ref.window_end_s > 0.0) {
    const Seconds end = ref.window_end_s > 0.0 ? ref.window_end_s : trace.duration();
    auto clipped = traces::clip(trace, ref.window_start_s, end);
    if (!clipped) return clipped.status().with_context(field + ".window");
    trace = std::move(clipped).value();
  }
  auto mapped = ref.nodes.empty() ? traces::map_round_robin(trace, workers) : traces::map_by_names(trace, ref.nodes);
  if (!mapped) return mapped.status().with_context(field + ".nodes");
  if (mapped->worker_count() != workers) {
    return Status::invalid_argument(field + ".nodes: the trace maps onto " + std::to_string(mapped->worker_count()) +
                                    " workers, the cluster has " + std::to_string(workers));
  }
  if (ref.time_scale == 1.0) return mapped;
  auto scaled = traces::scale_time(*mapped, ref.time_scale);
  if (!scaled) return scaled.status().with_context(field + ".time_scale");
  return scaled;
}

Result<AvailabilityTrace> from_generator(const scenarios::GeneratorSpec& g, std::size_t workers, std::uint64_t seed) {
  Result<AvailabilityTrace> trace =
      Status::invalid_argument("availability.generator.kind: '" + g.kind + "' (expected markov, random-walk, diurnal)");
  if (g.kind == "markov") {
    traces::MarkovOptions o;
    o.workers = workers, o.duration_s = g.duration_s, o.mtbf_s = g.mtbf_s, o.mttr_s = g.mttr_s;
    o.up_fraction = g.high, o.seed = seed;
    trace = traces::generate_markov_on_off(o);
  } else if (g.kind == "random-walk") {
    traces::RandomWalkOptions o;
    o.workers = workers, o.duration_s = g.duration_s, o.step_s = g.step_s, o.start = g.high;
    o.min_fraction = g.low, o.max_fraction = g.high, o.seed = seed;
    trace = traces::generate_random_walk(o);
  } else if (g.kind == "diurnal") {
    traces::DiurnalOptions o;
    o.workers = workers, o.duration_s = g.duration_s, o.period_s = g.period_s, o.step_s = g.step_s;
    o.mean = 0.5 * (g.low + g.high), o.amplitude = g.amplitude, o.seed = seed;
    trace = traces::generate_diurnal(o);
  }
  if (!trace) return trace.status().with_context("availability.generator");
  return trace;
}

}  // namespace

Result<AvailabilityReplayer> AvailabilityReplayer::create(const scenarios::Scenario& scenario) {
  const AvailabilitySpec& spec = scenario.availability;
  const std::size_t n = scenario.worker_count();
  AvailabilityReplayer r;
  r.initial_.assign(n, 1.0);

  if (spec.kind == AvailabilitySpec::Kind::kSchedule && spec.unit == scenarios::ScheduleUnit::kEpochs) {
    if (spec.noise) return Status::invalid_argument("availability.noise: the testbed cannot combine noise with an epoch schedule");
    for (std::size_t i = 0; i < spec.phases.size(); ++i) {
      const auto& phase = spec.phases[i];
      if (phase.fractions.size() != n) {
        return Status::invalid_argument(std::string("availability.phases[").append(std::to_string(i)).append(
            "]: one value per worker expected"));
      }
      for (std::size_t k = 0; k < n; ++k) {
        if (phase.at <= 0.0) {
          r.initial_[k] = phase.fractions[k];
        } else {
          r.events_.push_back({0.0, static_cast<std::int64_t>(phase.at), static_cast<WorkerId>(k), phase.fractions[k]});
        }
      }
    }
    r.current_ = r.initial_;
    return r;
  }

  std::optional<AvailabilityTrace> trace;
  if (spec.kind == AvailabilitySpec::Kind::kSchedule) {
    auto t = from_phases(spec, n);
    if (!t) return t.status();
    trace = std::move(t).value();
  } else if (spec.kind == AvailabilitySpec::Kind::kTrace) {
    auto t = from_reference(spec.trace, n, scenario.source_path, "availability.trace");
    if (!t) return t.status();
    trace = std::move(t).value();
  } else if (spec.kind == AvailabilitySpec::Kind::kGenerator) {
    auto t = from_generator(spec.generator, n, scenario.seed);
    if (!t) return t.status();
    trace = std::move(t).value();
  }
  if (spec.noise) {
    auto noise = from_reference(*spec.noise, n, scenario.source_path, "availability.noise");
    if (!noise) return noise.status();
    if (trace) {
      auto combined = traces::combine(*trace, *noise);
      if (!combined) return combined.status().with_context("availability.noise");
      trace = std::move(combined).value();
    } else {
      trace = std::move(noise).value();
    }
  }
  if (trace) {
    // Unroll loops up to a generous horizon: runs on the testbed last minutes, not days.
    constexpr Seconds kHorizon = 7.0 * 24 * 3600;
    const Seconds end = trace->loop_after_s() ? kHorizon : trace->duration() + 1.0;
    for (std::size_t k = 0; k < n; ++k) {
      const auto w = static_cast<WorkerId>(k);
      r.initial_[k] = trace->fraction_at(w, 0.0);
      for (const Seconds t : trace->change_times_in(w, 0.0, end)) {
        if (t <= 0.0) continue;
        r.events_.push_back({t, -1, w, trace->fraction_at(w, t)});
      }
    }
    std::stable_sort(r.events_.begin(), r.events_.end(),
                     [](const AvailabilityEvent& a, const AvailabilityEvent& b) { return a.time_s < b.time_s; });
  }
  r.current_ = r.initial_;
  return r;
}

std::vector<AvailabilityEvent> AvailabilityReplayer::take_due(Seconds now_s, std::int64_t epoch) {
  std::vector<AvailabilityEvent> due;
  while (next_ < events_.size()) {
    const AvailabilityEvent& e = events_[next_];
    const bool is_due = e.epoch >= 0 ? e.epoch <= epoch : e.time_s <= now_s;
    if (!is_due) break;
    if (current_[e.worker] != e.fraction) {
      current_[e.worker] = e.fraction;
      due.push_back(e);
    }
    ++next_;
  }
  return due;
}

std::optional<Seconds> AvailabilityReplayer::next_time() const {
  if (next_ >= events_.size() || events_[next_].epoch >= 0) return std::nullopt;
  return events_[next_].time_s;
}

}  // namespace omnilearn::emulator
