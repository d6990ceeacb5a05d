#include "omnilearn/run/availability_plan.h"

#include <filesystem>
#include <string>
#include <vector>

#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_generators.h"
#include "omnilearn/traces/trace_operations.h"

namespace omnilearn::run {
namespace {

using scenarios::AvailabilityPhase;
using scenarios::AvailabilitySpec;
using scenarios::GeneratorSpec;
using scenarios::Scenario;
using scenarios::ScheduleUnit;
using scenarios::TraceReference;
using traces::AvailabilityTrace;

std::string worker_name(std::size_t k) {
  std::string name = "w";
  return name.append(std::to_string(k));
}

Result<AvailabilityTrace> from_schedule(const AvailabilitySpec& spec, std::size_t workers) {
  std::vector<traces::WorkerSeries> series(workers);
  for (std::size_t k = 0; k < workers; ++k) series[k].name = worker_name(k);
  for (const AvailabilityPhase& phase : spec.phases) {
    for (std::size_t k = 0; k < workers; ++k) series[k].points.push_back({phase.at, phase.fractions[k]});
  }
  auto trace = AvailabilityTrace::create(std::move(series));
  if (!trace) return trace.status().with_context("availability.phases");
  return trace;
}

Result<AvailabilityTrace> from_reference(const TraceReference& ref, std::size_t workers, const Scenario& scenario,
                                         const std::string& field) {
  auto loaded = traces::read_trace_file(scenario.resolve_path(ref.path));
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
  Result<AvailabilityTrace> trace = Status::internal("availability.generator.kind: unknown");
  switch (g.kind) {
    case scenarios::GeneratorKind::kMarkov: {
      traces::MarkovOptions o;
      o.workers = workers, o.duration_s = g.duration_s, o.mtbf_s = g.mtbf_s, o.mttr_s = g.mttr_s;
      o.up_fraction = g.high, o.seed = seed;
      trace = traces::generate_markov_on_off(o);
      break;
    }
    case scenarios::GeneratorKind::kRandomWalk: {
      traces::RandomWalkOptions o;
      o.workers = workers, o.duration_s = g.duration_s, o.step_s = g.step_s, o.start = g.high;
      o.min_fraction = g.low, o.max_fraction = g.high, o.seed = seed;
      trace = traces::generate_random_walk(o);
      break;
    }
    case scenarios::GeneratorKind::kDiurnal: {
      traces::DiurnalOptions o;
      o.workers = workers, o.duration_s = g.duration_s, o.period_s = g.period_s, o.step_s = g.step_s;
      o.mean = 0.5 * (g.low + g.high), o.amplitude = g.amplitude, o.seed = seed;
      trace = traces::generate_diurnal(o);
      break;
    }
  }
  if (!trace) return trace.status().with_context("availability.generator");
  return trace;
}

// The one check of a schedule's phases: one fraction in [0, 1] per worker, times or epochs that increase.
Status check_phases(const AvailabilitySpec& spec, std::size_t workers) {
  for (std::size_t i = 0; i < spec.phases.size(); ++i) {
    const AvailabilityPhase& phase = spec.phases[i];
    const std::string field = "availability.phases[" + std::to_string(i) + "]";
    if (phase.fractions.size() != workers) {
      return Status::invalid_argument(field + ".fractions: " + std::to_string(phase.fractions.size()) +
                                      " values for " + std::to_string(workers) + " workers");
    }
    if (i > 0 && !(phase.at > spec.phases[i - 1].at)) return Status::invalid_argument(field + ".at: must increase");
    for (const double f : phase.fractions) {
      if (!(f >= 0.0 && f <= 1.0)) return Status::invalid_argument(field + ".fractions: values must be in [0, 1]");
    }
  }
  return Status::ok();
}

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
      auto t = from_reference(spec.trace, n, scenario, "availability.trace");
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
  auto noise = from_reference(*spec.noise, n, scenario, "availability.noise");
  if (!noise) return noise.status();
  if (!base) return std::optional<AvailabilityTrace>(std::move(noise).value());
  auto combined = traces::combine(*base, *noise);
  if (!combined) return combined.status().with_context("availability.noise");
  return std::optional<AvailabilityTrace>(std::move(combined).value());
}

}  // namespace

Result<AvailabilityPlan> AvailabilityPlan::create(const Scenario& scenario) {
  AvailabilityPlan plan;
  plan.workers_ = scenario.worker_count();
  const AvailabilitySpec& spec = scenario.availability;
  if (spec.kind == AvailabilitySpec::Kind::kSchedule) {
    OMNI_RETURN_IF_ERROR(check_phases(spec, plan.workers_));
    if (spec.unit == ScheduleUnit::kEpochs) plan.epoch_phases_ = spec.phases;
  }
  auto timed = timed_availability(scenario);
  if (!timed) return timed.status();
  plan.timed_ = std::move(timed).value();
  return plan;
}

const std::vector<double>* AvailabilityPlan::epoch_levels(std::int64_t epoch) const {
  const std::vector<double>* in_force = nullptr;
  for (const AvailabilityPhase& phase : epoch_phases_) {
    if (phase.at <= static_cast<double>(epoch)) in_force = &phase.fractions;
  }
  return in_force;
}

double AvailabilityPlan::initial(WorkerId k) const {
  const std::vector<double>* epoch = epoch_levels(0);
  const double epoch_level = epoch != nullptr ? (*epoch)[k] : 1.0;
  return epoch_level * (timed_ ? timed_->fraction_at(k, 0.0) : 1.0);
}

}  // namespace omnilearn::run
