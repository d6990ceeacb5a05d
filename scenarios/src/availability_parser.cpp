#include <cmath>
#include <filesystem>

#include "map_reader.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/scenarios/quantity_parser.h"
#include "section_parsers.h"

namespace omnilearn::scenarios::detail {
namespace {

std::string fmt_number(double v) {
  std::string s = std::to_string(v);
  while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
    const bool dot = s.back() == '.';
    s.pop_back();
    if (dot) break;
  }
  return s;
}

Status parse_phase(const ParseContext& ctx, const YAML::Node& node, const std::string& path,
                   const ClusterSpec& cluster, ScheduleUnit unit, AvailabilityPhase& out) {
  auto reader = MapReader::open(ctx.source, node, path, {"at", "cores", "fractions"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  if (!r.has("at")) return r.error("at", "missing (expected the phase's start)");
  if (unit == ScheduleUnit::kSeconds) {
    OMNI_RETURN_IF_ERROR(r.read_duration("at", out.at));
  } else {
    OMNI_RETURN_IF_ERROR(r.read("at", out.at, Range::kNonNegative));
  }
  OMNI_RETURN_IF_ERROR(r.require_one_of({"cores", "fractions"}));
  const std::size_t n = cluster.workers.size();
  const char* key = r.has("cores") ? "cores" : "fractions";
  std::vector<double> values;
  OMNI_RETURN_IF_ERROR(r.read_numbers(key, values, r.has("cores") ? Range::kNonNegative : Range::kUnit));
  if (values.size() != n) {
    return r.error(key, "expected " + std::to_string(n) + " values (one per worker), got " +
                            std::to_string(values.size()));
  }
  if (r.has("cores")) {
    for (std::size_t k = 0; k < n; ++k) {
      const double nominal = cluster.workers[k].cores;
      if (values[k] > nominal) {
        return ctx.source.error(r.get("cores")[k], r.field("cores") + "[" + std::to_string(k) + "]",
                                "worker " + cluster.workers[k].name + " has " + fmt_number(nominal) +
                                    " nominal cores, got " + fmt_number(values[k]) +
                                    " (declare the node with the most cores it ever gets)");
      }
      values[k] /= nominal;
    }
  }
  out.fractions = std::move(values);
  return Status::ok();
}

Status parse_schedule(const ParseContext& ctx, const YAML::Node& node, const ClusterSpec& cluster,
                      AvailabilitySpec& out) {
  auto reader = MapReader::open(ctx.source, node, "availability.schedule", {"unit", "phases"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  out.unit = ScheduleUnit::kEpochs;
  OMNI_RETURN_IF_ERROR(
      r.read_choice("unit", out.unit, {{"epochs", ScheduleUnit::kEpochs}, {"seconds", ScheduleUnit::kSeconds}}));
  const YAML::Node phases = r.get("phases");
  if (!phases.IsSequence() || phases.size() == 0) return r.error_got("phases", "a non-empty sequence of phases");
  out.phases.clear();
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const std::string path = r.field("phases") + "[" + std::to_string(i) + "]";
    AvailabilityPhase phase;
    OMNI_RETURN_IF_ERROR(parse_phase(ctx, phases[i], path, cluster, out.unit, phase));
    if (i == 0 && phase.at != 0.0) {
      return ctx.source.error(phases[i]["at"], path + ".at", "expected 0 (the first phase starts the run), got " +
                                                                 describe(phases[i]["at"]));
    }
    if (i > 0 && phase.at <= out.phases.back().at) {
      return ctx.source.error(phases[i]["at"], path + ".at",
                              "expected a start after the previous phase's " + fmt_number(out.phases.back().at) +
                                  ", got " + describe(phases[i]["at"]));
    }
    out.phases.push_back(std::move(phase));
  }
  return Status::ok();
}

Status parse_trace(const ParseContext& ctx, const YAML::Node& node, const std::string& path,
                   const ClusterSpec& cluster, TraceReference& out) {
  auto reader = MapReader::open(ctx.source, node, path, {"path", "nodes", "time_scale", "window"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  if (!r.has("path")) return r.error("path", "missing (expected the trace file)");
  std::string file;
  OMNI_RETURN_IF_ERROR(r.read("path", file));
  out.path = ctx.resolve(file);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(out.path, ec)) {
    return r.error("path", "trace file '" + out.path + "' not found");
  }
  OMNI_RETURN_IF_ERROR(r.read_strings("nodes", out.nodes));
  if (!out.nodes.empty() && out.nodes.size() != cluster.workers.size()) {
    return r.error("nodes", "expected " + std::to_string(cluster.workers.size()) +
                                " trace node names (one per worker), got " + std::to_string(out.nodes.size()));
  }
  OMNI_RETURN_IF_ERROR(r.read("time_scale", out.time_scale, Range::kPositive));
  if (r.has("window")) {
    const YAML::Node w = r.get("window");
    if (!w.IsSequence() || w.size() != 2) return r.error_got("window", "[start, end] (end 0: to the end)");
    // -1 marks a malformed bound (durations are never negative).
    const double start = w[0].IsScalar() ? parse_duration_s(w[0].Scalar()).value_or(-1.0) : -1.0;
    const double end = w[1].IsScalar() ? parse_duration_s(w[1].Scalar()).value_or(-1.0) : -1.0;
    if (start < 0.0 || end < 0.0) return r.error_got("window", "[start, end] durations >= 0");
    if (end != 0.0 && end <= start) {
      return r.error("window", "expected end > start (or end 0 for the whole trace), got " + fmt_number(start) +
                                   ", " + fmt_number(end));
    }
    out.window_start_s = start;
    out.window_end_s = end;
  }
  return Status::ok();
}

Status parse_generator(const ParseContext& ctx, const YAML::Node& node, std::size_t workers, GeneratorSpec& out) {
  auto reader = MapReader::open(ctx.source, node, "availability.generator",
                                {"kind", "mtbf", "mttr", "step", "low", "high", "period", "amplitude", "duration"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  if (!r.has("kind")) return r.error("kind", "missing (expected markov | random-walk | diurnal)");
  OMNI_RETURN_IF_ERROR(r.read_choice("kind", out.kind,
                                     {{"markov", GeneratorKind::kMarkov},
                                      {"random-walk", GeneratorKind::kRandomWalk},
                                      {"diurnal", GeneratorKind::kDiurnal}}));
  const std::pair<const char*, double*> durations[] = {{"mtbf", &out.mtbf_s},     {"mttr", &out.mttr_s},
                                                       {"step", &out.step_s},     {"period", &out.period_s},
                                                       {"duration", &out.duration_s}};
  for (const auto& [key, value] : durations) {
    OMNI_RETURN_IF_ERROR(r.read_duration(key, *value));
    if (*value <= 0.0) return r.error_got(key, "a positive duration");
  }
  OMNI_RETURN_IF_ERROR(r.read("low", out.low, Range::kUnit));
  OMNI_RETURN_IF_ERROR(r.read("high", out.high, Range::kUnit));
  OMNI_RETURN_IF_ERROR(r.read("amplitude", out.amplitude, Range::kUnit));
  if (out.low > out.high) return r.error("low", "expected low <= high, got low " + fmt_number(out.low) +
                                                    " > high " + fmt_number(out.high));
  // The trace is generated when the run starts: bound its points here (markov: two changes per mtbf + mttr).
  const bool markov = out.kind == GeneratorKind::kMarkov;
  const double step_s = markov ? (out.mtbf_s + out.mttr_s) / 2.0 : out.step_s;
  const double points = static_cast<double>(workers) * std::ceil(out.duration_s / step_s);
  if (points > static_cast<double>(limits::kMaxTracePoints)) {
    return r.error(markov ? "mtbf" : "step",
                   "expected at most " + std::to_string(limits::kMaxTracePoints) +
                       " trace points (workers x duration / " + (markov ? "((mtbf + mttr) / 2)" : "step") +
                       "), got " + fmt_number(points) + " for " + std::to_string(workers) + " workers over " +
                       fmt_number(out.duration_s) + " s");
  }
  return Status::ok();
}

}  // namespace

Status parse_availability(const ParseContext& ctx, const YAML::Node& node, const ClusterSpec& cluster,
                          AvailabilitySpec& out) {
  auto reader = MapReader::open(ctx.source, node, "availability", {"schedule", "trace", "generator", "noise"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;
  OMNI_RETURN_IF_ERROR(r.require_one_of({"schedule", "trace", "generator"}, /*at_most_one=*/true));
  if (r.has("schedule")) {
    out.kind = AvailabilitySpec::Kind::kSchedule;
    OMNI_RETURN_IF_ERROR(parse_schedule(ctx, r.get("schedule"), cluster, out));
  } else if (r.has("trace")) {
    out.kind = AvailabilitySpec::Kind::kTrace;
    OMNI_RETURN_IF_ERROR(parse_trace(ctx, r.get("trace"), "availability.trace", cluster, out.trace));
  } else if (r.has("generator")) {
    out.kind = AvailabilitySpec::Kind::kGenerator;
    OMNI_RETURN_IF_ERROR(parse_generator(ctx, r.get("generator"), cluster.workers.size(), out.generator));
  }
  if (r.has("noise")) {
    TraceReference noise;
    OMNI_RETURN_IF_ERROR(parse_trace(ctx, r.get("noise"), "availability.noise", cluster, noise));
    out.noise = std::move(noise);
  }
  return Status::ok();
}

}  // namespace omnilearn::scenarios::detail
