// The `energy:` section (energy_spec.h, docs/energy.md).
#include <algorithm>
#include <cmath>
#include <string>

#include "map_reader.h"
#include "omnilearn/base/format.h"
#include "omnilearn/scenarios/energy_spec.h"
#include "section_parsers.h"

namespace omnilearn::scenarios {

double DevicePower::busy_at(double batch) const {
  if (busy_by_batch.empty()) return busy_w.value_or(0.0);
  if (batch <= busy_by_batch.front().first) return busy_by_batch.front().second;
  if (batch >= busy_by_batch.back().first) return busy_by_batch.back().second;
  for (std::size_t i = 1; i < busy_by_batch.size(); ++i) {
    const auto& [b1, w1] = busy_by_batch[i];
    if (batch > b1) continue;
    const auto& [b0, w0] = busy_by_batch[i - 1];
    const double t = (std::log2(batch) - std::log2(b0)) / (std::log2(b1) - std::log2(b0));
    return w0 + t * (w1 - w0);
  }
  return busy_by_batch.back().second;
}

void DevicePower::override_with(const DevicePower& over) {
  const auto label = [&over](const std::string& from) {
    if (!from.empty()) return from;
    return std::string(kFromScenario) + (over.source.empty() ? "" : " (" + over.source + ")");
  };
  if (over.idle_w) idle_w = over.idle_w, idle_from = label(over.idle_from);
  if (over.busy_w || !over.busy_by_batch.empty() || over.table) {
    busy_w = over.busy_w;
    busy_by_batch = over.busy_by_batch;
    table = over.table;
    busy_from = label(over.busy_from);
  }
  if (over.off_w) off_w = over.off_w;
  if (over.blocked_w) blocked_w = over.blocked_w, blocked_from = over.blocked_from;
  if (!over.source.empty()) source = over.source;
}

std::string objective_name(const EnergyObjective& o) {
  return std::string(o.kind == EnergyObjective::Kind::kEnergyWithin ? "energy_within " : "time_within ") +
         format_g(o.percent);
}

std::string slowing_decision_name(SlowingDecision d) {
  return d == SlowingDecision::kPrevious ? "previous" : "oracle";
}

std::string phase_power_name(const PhasePower& p) {
  switch (p.mode) {
    case PhasePowerMode::kAuto: return "auto";
    case PhasePowerMode::kIdle: return "idle";
    case PhasePowerMode::kBusy: return "busy";
    case PhasePowerMode::kWatts: return format_g(p.watts);
  }
  return "auto";
}

namespace detail {
namespace {

Status read_phase(const MapReader& r, std::string_view key, bool allow_auto, PhasePower& out) {
  if (!r.has(key)) return Status::ok();
  const YAML::Node n = r.get(key);
  if (n.IsScalar()) {
    const std::string& text = n.Scalar();
    if (text == "idle") return out = {PhasePowerMode::kIdle, 0.0}, Status::ok();
    if (text == "busy") return out = {PhasePowerMode::kBusy, 0.0}, Status::ok();
    if (text == "auto" && allow_auto) return out = {PhasePowerMode::kAuto, 0.0}, Status::ok();
    double watts = -1.0;
    if (r.read(key, watts, Range::kNonNegative).is_ok()) return out = {PhasePowerMode::kWatts, watts}, Status::ok();
  }
  return r.error_got(key, allow_auto ? "auto, idle, busy or watts (a number >= 0)"
                                     : "idle, busy or watts (a number >= 0)");
}

// energy.gpu.table: {kind, workload, power_limit}; checked against the table when the run reads it.
Status read_table(const MapReader& parent, DevicePower& out) {
  auto r = MapReader::open(parent.source(), parent.get("table"), parent.field("table"),
                           {"kind", "workload", "power_limit"});
  if (!r) return r.status();
  for (const char* k : {"kind", "workload", "power_limit"}) {
    if (!r->has(k)) return r->error(k, "is required (names and limits as in traces/devices/zeus-power.csv)");
  }
  if (parent.has("busy") || parent.has("busy_by_batch")) {
    return parent.error("table", "gives the busy power: give table or busy / busy_by_batch, not both");
  }
  GpuTableRef t;
  OMNI_RETURN_IF_ERROR(r->read("kind", t.kind));
  OMNI_RETURN_IF_ERROR(r->read("workload", t.workload));
  OMNI_RETURN_IF_ERROR(r->read("power_limit", t.power_limit_w, Range::kPositive));
  out.table = t;
  return Status::ok();
}

Status read_device(const MapReader& parent, std::string_view key, bool gpu, DevicePower& out) {
  if (!parent.has(key)) return Status::ok();
  auto r = gpu ? MapReader::open(parent.source(), parent.get(key), parent.field(key),
                                 {"idle", "busy", "busy_by_batch", "off", "source", "table"})
               : MapReader::open(parent.source(), parent.get(key), parent.field(key), {"idle", "busy", "off", "source"});
  if (!r) return r.status();
  if (gpu && r->has("table")) OMNI_RETURN_IF_ERROR(read_table(*r, out));
  const auto optional_watts = [&r](std::string_view k, std::optional<double>& o) {
    if (!r->has(k)) return Status::ok();
    double w = 0.0;
    OMNI_RETURN_IF_ERROR(r->read(k, w, Range::kNonNegative));
    o = w;
    return Status::ok();
  };
  OMNI_RETURN_IF_ERROR(optional_watts("idle", out.idle_w));
  OMNI_RETURN_IF_ERROR(optional_watts("busy", out.busy_w));
  OMNI_RETURN_IF_ERROR(optional_watts("off", out.off_w));
  OMNI_RETURN_IF_ERROR(r->read("source", out.source));
  if (r->has("busy_by_batch")) {
    if (r->has("busy")) return r->error("busy_by_batch", "give busy or busy_by_batch, not both");
    const YAML::Node list = r->get("busy_by_batch");
    const auto bad = [&r] { return r->error_got("busy_by_batch", "a list of [batch, watts] pairs, batches rising"); };
    if (!list.IsSequence() || list.size() == 0) return bad();
    for (const YAML::Node& pair : list) {
      if (!pair.IsSequence() || pair.size() != 2 || !pair[0].IsScalar() || !pair[1].IsScalar()) return bad();
      double b = 0.0, w = 0.0;
      try {
        b = pair[0].as<double>();
        w = pair[1].as<double>();
      } catch (const YAML::Exception&) {
        return bad();
      }
      if (!(b >= 1.0) || !(w >= 0.0) || !std::isfinite(w) ||
          (!out.busy_by_batch.empty() && b <= out.busy_by_batch.back().first)) {
        return bad();
      }
      out.busy_by_batch.emplace_back(b, w);
    }
  }
  return Status::ok();
}

// `objective: {energy_within: X}` or `{time_within: Y}` (percent).
Status read_objective(const MapReader& parent, std::optional<EnergyObjective>& out) {
  if (!parent.has("objective")) return Status::ok();
  auto r = MapReader::open(parent.source(), parent.get("objective"), parent.field("objective"),
                           {"energy_within", "time_within"});
  if (!r) return r.status();
  if (r->has("energy_within") == r->has("time_within")) {
    return parent.error("objective", "give one of energy_within (shortest step within X% of its least energy) or "
                                     "time_within (least energy within Y% of its shortest time)");
  }
  EnergyObjective o;
  const bool energy = r->has("energy_within");
  o.kind = energy ? EnergyObjective::Kind::kEnergyWithin : EnergyObjective::Kind::kTimeWithin;
  OMNI_RETURN_IF_ERROR(r->read(energy ? "energy_within" : "time_within", o.percent, Range::kNonNegative));
  out = o;
  return Status::ok();
}

// `slowing_decision: oracle | previous`.
Status read_slowing_decision(const MapReader& r, SlowingDecision& out) {
  if (!r.has("slowing_decision")) return Status::ok();
  std::string name;
  OMNI_RETURN_IF_ERROR(r.read("slowing_decision", name));
  if (name == "oracle") {
    out = SlowingDecision::kOracle;
  } else if (name == "previous") {
    out = SlowingDecision::kPrevious;
  } else {
    return r.error("slowing_decision", "is '" + name + "'; expected oracle (each step's own times) or previous (the "
                                       "times of the steps before it, discrete states, a switch cost)");
  }
  return Status::ok();
}

}  // namespace

Status parse_energy(const ParseContext& ctx, const YAML::Node& node, EnergySpec& out) {
  if (node.IsNull()) return Status::ok();  // `energy:` alone: the defaults
  auto r = MapReader::open(ctx.source, node, "energy",
                           {"wait", "comm", "cpu", "gpu", "slow_with_slack", "min_frequency", "power_exponent",
                            "objective", "slowing_decision", "switch_cost_s"});
  if (!r) return r.status();
  OMNI_RETURN_IF_ERROR(read_phase(*r, "wait", true, out.wait));
  OMNI_RETURN_IF_ERROR(read_phase(*r, "comm", true, out.comm));
  OMNI_RETURN_IF_ERROR(read_device(*r, "cpu", false, out.cpu));
  OMNI_RETURN_IF_ERROR(read_device(*r, "gpu", true, out.gpu));
  OMNI_RETURN_IF_ERROR(r->read("slow_with_slack", out.slow_with_slack));
  OMNI_RETURN_IF_ERROR(r->read("min_frequency", out.min_frequency, Range::kOpenUnit));
  OMNI_RETURN_IF_ERROR(r->read("power_exponent", out.power_exponent, Range::kPositive));
  OMNI_RETURN_IF_ERROR(read_objective(*r, out.objective));
  OMNI_RETURN_IF_ERROR(read_slowing_decision(*r, out.slowing_decision));
  OMNI_RETURN_IF_ERROR(r->read("switch_cost_s", out.switch_cost_s, Range::kNonNegative));
  if (out.objective && out.slow_with_slack) {
    return r->error("objective", "chooses every worker's frequency each step: give it or slow_with_slack, not both");
  }
  return Status::ok();
}

}  // namespace detail
}  // namespace omnilearn::scenarios
