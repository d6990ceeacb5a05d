#include "omnilearn/scenarios/timed_availability.h"

#include <filesystem>
#include <string>
#include <vector>

#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_generators.h"
#include "omnilearn/traces/trace_operations.h"

namespace omnilearn::scenarios {
namespace {


using traces::AvailabilityTrace;

std::string worker_name(std::size_t k) {
  std::string name = "w";
  return name.append(std::to_string(k));
}

Result<AvailabilityTrace> from_schedule(const AvailabilitySpec& spec, std::size_t workers) {
  std::vector<traces::WorkerSeries> series(workers);
  for (std::size_t k = 0; k < workers; ++k) series[k].name = worker_name(k);
  for (std::size_t i = 0; i < spec.phases.size(); ++i) {
    const AvailabilityPhase& phase = spec.phases[i];
    if (phase.fractions.size() != workers) {
      return Status::invalid_argument("availability.phases[" + std::to_string(i) + "].fractions: " +
                                      std::to_string(phase.fractions.size()) + " values for " +
                                      std::to_string(workers) + " workers");
    }
    for (std::size_t k = 0; k < workers; ++k) series[k].points.push_back({phase.at, phase.fractions[k]});
  }
  auto trace = AvailabilityTrace::create(std::move(series));
  if (!trace) return trace.status().with_context("availability.phases");
  return trace;
}

// Trace paths are relative to the scenario file when they do not exist as given.
std::string resolve_path(const std::string& path, const std::string& scenario_path) {
  namespace fs = std::filesystem;
  std::error_code ec;  // a path that cannot be examined (too long, a loop) is resolved like a missing one
  if (fs::path(path).is_absolute() || fs::exists(path, ec) || scenario_path.empty()) return path;
  return (fs::path(scenario_path).parent_path() / path).string();
}

Result<AvailabilityTrace> from_reference(const TraceReference& ref, std::size_t workers,
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
    return Status::invalid_argument(field + ".nodes: " + std::to_string(mapped->worker_count()) + " names for " +
                                    std::to_string(workers) + " workers");
  }
  if (ref.time_scale == 1.0) return mapped;
  auto scaled = traces::scale_time(*mapped, ref.time_scale);
  if (!scaled) return scaled.status().with_context(field + ".time_scale");
  return scaled;
}

Result<AvailabilityTrace> from_generator(const GeneratorSpec& g, std::size_t workers, std::uint64_t seed) {
  Result<AvailabilityTrace> trace = Status::invalid_argument("availability.generator.kind: '" + g.kind +
                                                             "' is not yet supported (markov, random-walk, diurnal)");
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

Result<std::optional<AvailabilityTrace>> timed_availability(const Scenario& scenario) {
  const AvailabilitySpec& spec = scenario.availability;
  const std::size_t n = scenario.worker_count();
  std::optional<AvailabilityTrace> base;
  switch (spec.kind) {
    case AvailabilitySpec::Kind::kNone: break;
    case AvailabilitySpec::Kind::kSchedule:
      if (spec.unit == ScheduleUnit::kSeconds) {
        auto t = from_schedule(spec, n);
        if (!t) return t.status();
        base = std::move(t).value();
      }
      break;
    case AvailabilitySpec::Kind::kTrace: {
      auto t = from_reference(spec.trace, n, scenario.source_path, "availability.trace");
      if (!t) return t.status();
      base = std::move(t).value();
      break;
    }
    case AvailabilitySpec::Kind::kGenerator: {
      auto t = from_generator(spec.generator, n, scenario.seed);
      if (!t) return t.status();
      base = std::move(t).value();
      break;
    }
  }
  if (!spec.noise) return base;
  auto noise = from_reference(*spec.noise, n, scenario.source_path, "availability.noise");
  if (!noise) return noise.status();
  if (!base) return std::optional<AvailabilityTrace>(std::move(noise).value());
  auto combined = traces::combine(*base, *noise);
  if (!combined) return combined.status().with_context("availability.noise");
  return std::optional<AvailabilityTrace>(std::move(combined).value());
}

}  // namespace omnilearn::scenarios
