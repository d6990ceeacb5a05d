#include "omnilearn/run/energy_meter.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include "omnilearn/base/format.h"
#include "omnilearn/run/gpu_table_power.h"
#include "omnilearn/run/jobs_run_setup.h"
#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/scenarios/quantity_parser.h"

namespace omnilearn::run {

namespace {

std::vector<std::string_view> split(std::string_view text, char at) {
  std::vector<std::string_view> parts;
  for (std::size_t i; (i = text.find(at)) != std::string_view::npos; text.remove_prefix(i + 1)) {
    parts.push_back(text.substr(0, i));
  }
  parts.push_back(text);
  return parts;
}

}  // namespace

std::optional<double> parse_watts(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  const std::optional<double> w = scenarios::parse_number(text);
  if (!w || !(*w >= 0.0) || !std::isfinite(*w)) return std::nullopt;
  return w;
}

Result<scenarios::DevicePower> host_wattage_power(const HostWattage& host) {
  scenarios::DevicePower d;
  const double share = 1.0 / std::max(host.workers, 1);
  const std::string where = "host '" + host.host + "': property ";
  if (!host.per_state.empty()) {
    const std::vector<std::string_view> states = split(host.per_state, ',');
    const std::string bad = where + "wattage_per_state '" + host.per_state + "'";
    if (states.size() != static_cast<std::size_t>(host.pstates)) {
      return Status::invalid_argument(bad + " has " + std::to_string(states.size()) + " power states, the host " +
                                      std::to_string(host.pstates) + " (give idle:busy or idle:epsilon:allcores "
                                      "watts for each of its speeds)");
    }
    for (std::size_t i = 0; i < states.size(); ++i) {
      const std::vector<std::string_view> w = split(states[i], ':');
      std::vector<double> values;
      for (std::string_view part : w) {
        if (auto v = parse_watts(part)) values.push_back(*v);
      }
      if ((w.size() != 2 && w.size() != 3) || values.size() != w.size()) {
        return Status::invalid_argument(bad + ": power state " + std::to_string(i) + " is '" + std::string(states[i]) +
                                        "', expected idle:busy or idle:epsilon:allcores (watts >= 0)");
      }
      if (static_cast<int>(i) == host.pstate) d.idle_w = values.front() * share, d.busy_w = values.back() * share;
    }
  }
  if (!host.off.empty()) {
    const std::optional<double> off = parse_watts(host.off);
    if (!off) return Status::invalid_argument(where + "wattage_off '" + host.off + "' is not watts (a number >= 0)");
    d.off_w = *off * share;
  }
  if (d.idle_w || d.off_w) d.source = "platform file, host '" + host.host + "'";
  d.idle_from = d.busy_from = std::string(scenarios::kFromPlatform) + " (host '" + host.host + "', pstate " +
                              std::to_string(host.pstate) + ")";
  return d;
}

std::vector<PowerState> host_pstate_states(const HostWattage& host) {
  std::vector<PowerState> states;
  const int own = host.pstate;
  if (host.per_state.empty() || host.speeds.size() < 2 || own < 0 ||
      static_cast<std::size_t>(own) >= host.speeds.size() || !(host.speeds[static_cast<std::size_t>(own)] > 0.0)) {
    return states;
  }
  const std::vector<std::string_view> per_state = split(host.per_state, ',');
  if (per_state.size() != host.speeds.size()) return states;
  const double share = 1.0 / std::max(host.workers, 1);
  for (std::size_t i = 0; i < per_state.size(); ++i) {
    const double speed = host.speeds[i];
    if (!(speed > 0.0) || !(speed < host.speeds[static_cast<std::size_t>(own)])) continue;
    const std::optional<double> busy = parse_watts(split(per_state[i], ':').back());
    if (!busy) return {};
    states.push_back(PowerState{host.speeds[static_cast<std::size_t>(own)] / speed, *busy * share,
                                static_cast<double>(i)});
  }
  std::sort(states.begin(), states.end(),
            [](const PowerState& a, const PowerState& b) { return a.slowdown < b.slowdown; });
  return states;
}

std::vector<PowerState> WorkerPower::states(double batch) const {
  if (!pstates.empty()) return pstates;
  std::vector<PowerState> out;
  if (!table || !device.table) return out;
  const scenarios::GpuTableRef& ref = *device.table;
  const std::vector<std::int64_t> batches = table->batches(ref.kind, ref.workload);
  if (batches.empty()) return out;
  // Flat outside the measured batches where the curve is (a preset's proxy workload); the section's refuses them.
  const auto b = static_cast<std::int64_t>(
      std::clamp(std::llround(batch), static_cast<long long>(batches.front()), static_cast<long long>(batches.back())));
  auto full = table->figure(ref.kind, ref.workload, b, ref.power_limit_w);
  if (!full) return out;
  // The limits measured at the nearest measured batch at or below b (an interpolated batch takes those its lower
  // neighbour has; figure() refuses any its upper one lacks).
  const auto below = std::upper_bound(batches.begin(), batches.end(), b);
  const std::int64_t at = below == batches.begin() ? batches.front() : *std::prev(below);
  for (std::int64_t limit : table->power_limits(ref.kind, ref.workload, at)) {
    if (!(static_cast<double>(limit) < ref.power_limit_w)) continue;
    auto f = table->figure(ref.kind, ref.workload, b, static_cast<double>(limit));
    if (!f) continue;
    const double slowdown = f->time_per_epoch_s / full->time_per_epoch_s;
    if (!(slowdown >= 1.0)) continue;  // a lower limit measured faster: not a slowing state
    out.push_back(PowerState{slowdown, count * f->average_power_w, static_cast<double>(limit)});
  }
  std::sort(out.begin(), out.end(), [](const PowerState& x, const PowerState& y) { return x.slowdown < y.slowdown; });
  return out;
}

std::string WorkerPower::slowing_source(double power_exponent) const {
  if (!pstates.empty()) return pstates_from;
  if (table && device.table) {
    return std::string(scenarios::kFromMeasuredTable) + " (" + device.table->kind + " " + device.table->workload +
           ": the measured power limits below " + format_g(device.table->power_limit_w) +
           " W at the worker's batch, their time and power)";
  }
  return std::string(scenarios::kFromAssumedLaw) + " (idle + (busy - idle) f^" + format_g(power_exponent) +
         "; the saving under f^1, f^2, f^3 in alpha_band)";
}

namespace {

// A worker's figures that name the measured table read from it (the table itself read once, on first need).
class TableReader {
 public:
  Status resolve(scenarios::DevicePower& d, const scenarios::Scenario& scenario, bool idle_from_table) {
    if (!d.table) return Status::ok();
    const std::string path = shipped_device_table("zeus-power.csv");
    if (!table_) {
      auto t = traces::read_gpu_power_table(path);
      if (!t) {
        // A preset's curve keeps its hand-copied rows (labelled so); the section's setting needs the table.
        if (!d.table->refuse_outside) return d.table.reset(), Status::ok();
        return Status::invalid_argument("energy.gpu.table: " + t.status().message());
      }
      table_ = std::make_shared<const traces::GpuPowerTable>(std::move(t).value());
    }
    OMNI_RETURN_IF_ERROR(resolve_gpu_table(d, *table_, idle_from_table, "energy.gpu.table"));
    const auto [lo, hi] = table_batch_range(d);
    const double min_b = static_cast<double>(scenario.policy.min_batch);
    const double max_b = static_cast<double>(scenario.policy.max_batch);
    if (d.table->refuse_outside && (min_b < lo || max_b > hi)) {
      return Status::invalid_argument(
          "energy.gpu.table: the workers' batches " + format_g(min_b) + "-" + format_g(max_b) +
          " (policy.min_batch, policy.max_batch) leave the measured batches " + format_g(lo) + "-" + format_g(hi) +
          " of " + d.table->kind + " " + d.table->workload + " (the table is not extrapolated)");
    }
    return Status::ok();
  }

  std::shared_ptr<const traces::GpuPowerTable> table() const { return table_; }

 private:
  std::shared_ptr<const traces::GpuPowerTable> table_;
};

}  // namespace

Result<std::vector<WorkerPower>> worker_power(const scenarios::Scenario& scenario,
                                              const std::vector<HostWattage>& hosts) {
  const scenarios::EnergySpec spec = scenario.energy.value_or(scenarios::EnergySpec{});
  std::vector<WorkerPower> workers;
  TableReader tables;
  for (std::size_t k = 0; k < scenario.cluster.workers.size(); ++k) {
    const scenarios::NodeSpec& node = scenario.cluster.workers[k];
    const double count = static_cast<double>(std::max(node.cores, 1));
    scenarios::DevicePower d = scenarios::preset_power(scenario.cluster.preset, node).value_or(scenarios::DevicePower{});
    if (k < hosts.size()) {
      // The host's figures are its whole node's: per core (or device) here, as the preset's and the section's are.
      auto own = host_wattage_power(hosts[k]);
      if (!own) return Status::invalid_argument("cluster.platform: " + own.status().message());
      for (std::optional<double>* w : {&own->idle_w, &own->busy_w, &own->off_w}) {
        if (*w) **w /= count;
      }
      if (own->busy_w) d.table.reset();
      d.override_with(*own);
    }
    d.override_with(node.gpu ? spec.gpu : spec.cpu);
    if (node.gpu) {
      const bool section_table = spec.gpu.table.has_value();
      OMNI_RETURN_IF_ERROR(tables.resolve(d, scenario, section_table && !spec.gpu.idle_w));
    }
    if (!d.idle_w || !d.has_busy()) {
      const char* kind = node.gpu ? "gpu" : "cpu";
      const bool file = scenario.cluster.topology == scenarios::Topology::kPlatformFile;
      return Status::not_found("no power figures for worker " + std::to_string(k) + " (" + node.name + ": " +
                               (scenario.cluster.preset.empty() ? "no preset; " : "") + "give energy." + kind +
                               ".idle and energy." + kind + ".busy" + (file ? ", or the host's wattage_per_state" : "") +
                               ")");
    }
    WorkerPower p{std::move(d), count, node.gpu, {}, {}, {}};
    if (node.gpu && p.device.table) p.table = tables.table();
    // A host's pstates slow a CPU worker where its busy figure is the host's own (not replaced by the section's).
    if (!node.gpu && k < hosts.size() && !spec.cpu.busy_w && !spec.cpu.table) {
      p.pstates = host_pstate_states(hosts[k]);
      p.pstates_from = std::string(scenarios::kFromPlatform) + " (host '" + hosts[k].host + "': its slower pstates' " +
                       "speeds and wattage_per_state)";
    }
    workers.push_back(std::move(p));
  }
  return workers;
}

EnergyMeter EnergyMeter::for_scenario(const scenarios::Scenario& scenario) {
  auto meter = for_scenario(scenario, {});
  if (!meter) {  // energy.gpu.table refused: the run says why instead of charging wrong figures
    return without_figures(scenario.energy.value_or(scenarios::EnergySpec{}), meter.status().message());
  }
  return std::move(*meter);
}

Result<EnergyMeter> EnergyMeter::for_scenario(const scenarios::Scenario& scenario,
                                              const std::vector<HostWattage>& hosts) {
  const scenarios::EnergySpec spec = scenario.energy.value_or(scenarios::EnergySpec{});
  auto workers = worker_power(scenario, hosts);
  if (!workers) {
    // Missing figures leave the run without energy and say why; a malformed property is an error.
    if (workers.status().code() == StatusCode::kNotFound) return without_figures(spec, workers.status().message());
    return workers.status();
  }
  return EnergyMeter(spec, std::move(workers).value());
}

EnergyMeter::EnergyMeter(scenarios::EnergySpec spec, std::vector<WorkerPower> workers)
    : spec_(std::move(spec)), power_(std::move(workers)), workers_(power_.size()) {}

EnergyMeter EnergyMeter::without_figures(scenarios::EnergySpec spec, std::string reason) {
  EnergyMeter m(std::move(spec), {});
  m.reason_ = std::move(reason);
  return m;
}

double EnergyMeter::charge(Worker& w, std::size_t k, Seconds start, Seconds duration, double power_w,
                           bool count_down) {
  if (duration <= 0.0) return 0.0;
  const Seconds end = start + duration;
  double joules = 0.0;
  const auto& f = w.fractions;
  // The change in force at `start`: the last one at or before it.
  std::size_t i = static_cast<std::size_t>(
      std::upper_bound(f.begin(), f.end(), start, [](Seconds t, const auto& c) { return t < c.first; }) - f.begin());
  i = i > 0 ? i - 1 : 0;
  for (Seconds t = start; t < end && i < f.size(); ++i) {
    const Seconds until = i + 1 < f.size() ? std::min(end, f[i + 1].first) : end;
    if (until <= t) continue;
    const double fraction = f[i].second;
    if (fraction > 0.0) {
      joules += fraction * power_w * (until - t);
    } else {
      joules += power_[k].off_w() * (until - t);
      if (count_down) w.down_in_phases_s += until - t;
    }
    t = until;
  }
  return joules;
}

double phase_power_w(const scenarios::PhasePower& rule, double idle_w, double busy_w, double count, bool gpu,
                     bool comm, std::optional<double> blocked_w) {
  switch (rule.mode) {
    case scenarios::PhasePowerMode::kIdle: return idle_w;
    case scenarios::PhasePowerMode::kBusy: return busy_w;
    case scenarios::PhasePowerMode::kWatts: return count * rule.watts;
    case scenarios::PhasePowerMode::kAuto:
      if (gpu) return blocked_w ? count * *blocked_w : busy_w;
      return comm ? busy_w : idle_w;
  }
  return idle_w;
}

std::string phase_power_source(const scenarios::PhasePower& rule, const scenarios::DevicePower& d, bool gpu,
                               bool comm) {
  switch (rule.mode) {
    case scenarios::PhasePowerMode::kIdle: return "idle: " + d.idle_from;
    case scenarios::PhasePowerMode::kBusy: return "busy: " + d.busy_from;
    case scenarios::PhasePowerMode::kWatts: return scenarios::kFromScenario;
    case scenarios::PhasePowerMode::kAuto:
      if (gpu && d.blocked_w) return "blocked: " + d.blocked_from;
      if (gpu) return "busy: " + d.busy_from + "; a GPU polling in NCCL, assumed";
      return comm ? "busy: " + d.busy_from : "idle: " + d.idle_from;
  }
  return "";
}

StepWorker EnergyMeter::step_power(WorkerId worker, BatchSize batch, Seconds time_s) const {
  const WorkerPower& p = power_[worker];
  const auto& f = workers_[worker].fractions;
  const auto at = std::upper_bound(f.begin(), f.end(), time_s, [](Seconds t, const auto& c) { return t < c.first; });
  const double fraction = at == f.begin() ? 1.0 : std::prev(at)->second;
  if (fraction <= 0.0) return StepWorker{0.0, p.off_w(), p.off_w(), p.off_w(), {}};
  const double idle = p.idle_w();
  if (batch == 0) return StepWorker{0.0, fraction * idle, fraction * idle, fraction * idle, {}};
  const double busy = p.busy_w(static_cast<double>(batch));
  const double wait = phase_power_w(spec_.wait, idle, busy, p.count, p.gpu, false, p.device.blocked_w);
  StepWorker out{0.0, fraction * idle, fraction * busy, fraction * wait, states_at(worker, static_cast<double>(batch))};
  for (PowerState& state : out.states) state.busy_w *= fraction;
  return out;
}

const std::vector<PowerState>& EnergyMeter::states_at(WorkerId worker, double batch) const {
  state_cache_.resize(power_.size(), {-1.0, {}});
  auto& [cached_batch, states] = state_cache_[worker];
  if (cached_batch != batch) cached_batch = batch, states = power_[worker].states(batch);
  return states;
}

double EnergyMeter::slowed_power(std::size_t k, double batch, double frequency, int state, double exponent) const {
  const WorkerPower& p = power_[k];
  const double idle = p.idle_w();
  const double power = state >= 0       ? states_at(k, batch)[static_cast<std::size_t>(state)].busy_w
                       : frequency < 1.0 ? power_at_frequency_w(idle, p.busy_w(batch), frequency, exponent)
                                         : p.busy_w(batch);
  const double fraction = k < busy_fraction_.size() ? busy_fraction_[k] : 1.0;
  return fraction < 1.0 ? idle + (power - idle) * fraction : power;
}

void EnergyMeter::slowing_what_ifs(Worker& w, std::size_t k, double batch, Seconds start, Seconds compute_s,
                                   Seconds full_s, double frequency, int state, double charged_j, double wait_power) {
  const double busy = slowed_power(k, batch, 1.0, -1, 1.0);
  unslowed_j_ += charge(w, k, start, full_s, busy, false) +
                 charge(w, k, start + full_s, compute_s - full_s, wait_power, false);
  slowed_j_ += charged_j;
  const bool law = state < 0 && frequency < 1.0;
  law_slowed_ = law_slowed_ || law;
  for (int a = 1; a <= 3; ++a) {
    band_j_[a - 1] +=
        law ? charge(w, k, start, compute_s, slowed_power(k, batch, frequency, -1, static_cast<double>(a)), false)
            : charged_j;
  }
}

void EnergyMeter::iteration(const IterationRecord& r) {
  if (!has_figures() || r.worker >= workers_.size()) return;
  Worker& w = workers_[r.worker];
  const WorkerPower& p = power_[r.worker];
  const double batch = static_cast<double>(std::max<BatchSize>(r.batch, 1));
  const double idle = p.idle_w(), busy = p.busy_w(batch);
  const double wait_power = phase_power_w(spec_.wait, idle, busy, p.count, p.gpu, false, p.device.blocked_w);
  Seconds compute = r.compute_s, wait = r.wait_s;
  // A slowed phase: its factor (1 / slowdown in a measured state), its state and its full-speed seconds.
  double f = 1.0;
  int state = -1;
  Seconds full = compute;
  bool slowed = false;
  if (r.frequency < 1.0 || r.power_state >= 0 || r.switch_s > 0.0) {
    // The driver slowed the step (energy.objective, or a decision on earlier steps): compute is the slowed time.
    slowed = true, f = r.frequency, state = r.power_state;
    full = (compute - r.switch_s) * f;
  } else if (spec_.slow_with_slack && spec_.slowing_decision == scenarios::SlowingDecision::kOracle && wait > 0.0 &&
             compute > 0.0) {
    // The worker computes just slowly enough to arrive with the slowest: the step time is unchanged.
    const std::vector<PowerState>& states = states_at(r.worker, batch);
    if (!states.empty()) {
      state = slack_state(StepWorker{compute, idle, busy, wait_power, states}, wait);
      if (state >= 0) f = 1.0 / states[static_cast<std::size_t>(state)].slowdown;
    } else {
      f = slack_frequency(compute, wait, spec_.min_frequency);
    }
    if (f < 1.0 || state >= 0) {
      slowed = true;
      const Seconds stretched = std::min(compute / f, compute + wait);
      wait -= stretched - compute;
      compute = stretched;
    }
  }
  const double compute_power =
      slowed ? slowed_power(r.worker, batch, f, state, spec_.power_exponent) : slowed_power(r.worker, batch, 1.0, -1, 1.0);
  Seconds t = r.start_s;
  const double cj = charge(w, r.worker, t, compute, compute_power);
  if (slowed) {
    slowing_what_ifs(w, r.worker, batch, t, compute, full, f, state, cj, wait_power);
  }
  t += compute;
  const double wj = charge(w, r.worker, t, wait, wait_power);
  t += wait;
  const double mj = charge(w, r.worker, t, r.comm_s, phase_power_w(spec_.comm, idle, busy, p.count, p.gpu, true,
                                                                   p.device.blocked_w));
  w.e.compute_j += cj, w.e.wait_j += wj, w.e.comm_j += mj;
  w.e.compute_s += compute, w.e.wait_s += wait, w.e.comm_s += r.comm_s;
  // Records of one worker come in time order: the changes before this one's start are no longer needed.
  auto& fr = w.fractions;
  std::size_t keep = 0;
  while (keep + 1 < fr.size() && fr[keep + 1].first <= r.start_s) ++keep;
  if (keep > 0) fr.erase(fr.begin(), fr.begin() + static_cast<std::ptrdiff_t>(keep));
}

void EnergyMeter::availability(WorkerId worker, double fraction, Seconds time_s) {
  if (!has_figures() || worker >= workers_.size()) return;
  Worker& w = workers_[worker];
  const double before = w.fractions.back().second;
  if (before <= 0.0 && fraction > 0.0) w.down_s += time_s - w.down_since_s;
  if (before > 0.0 && fraction <= 0.0) w.down_since_s = time_s;
  if (w.fractions.back().first == time_s) {
    w.fractions.back().second = fraction;
  } else {
    w.fractions.emplace_back(time_s, fraction);
  }
}

void EnergyMeter::set_busy_fraction(WorkerId worker, double fraction) {
  if (!has_figures() || worker >= workers_.size() || !(fraction > 0.0)) return;
  busy_fraction_.resize(workers_.size(), 1.0);
  busy_fraction_[worker] = std::min(fraction, 1.0);
}

WorkerEnergy EnergyMeter::settled(std::size_t k, Seconds time_s) const {
  const Worker& w = workers_[k];
  WorkerEnergy e = w.e;
  Seconds down = w.down_s;
  if (w.fractions.back().second <= 0.0) down += std::max(0.0, time_s - w.down_since_s);
  const Seconds down_idle = std::max(0.0, down - w.down_in_phases_s);
  e.idle_s = time_s - e.compute_s - e.wait_s - e.comm_s - down_idle;
  if (e.idle_s < 1e-9 * time_s) e.idle_s = 0.0;  // rounding of the phase sums
  e.idle_j = e.idle_s * power_[k].idle_w() + down_idle * power_[k].off_w();
  return e;
}

double EnergyMeter::evaluation(Seconds time_s) {
  if (!has_figures()) return 0.0;
  // Summed as summary() sums `joules` (by phase over the workers), so that the two agree at the run's end.
  double compute = 0.0, comm = 0.0, wait = 0.0, idle = 0.0;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const WorkerEnergy e = settled(k, time_s);
    compute += e.compute_j, comm += e.comm_j, wait += e.wait_j, idle += e.idle_j;
  }
  const double joules = compute + comm + wait + idle + (links_at_ ? links_at_(time_s) : 0.0);
  evaluations_.emplace_back(time_s, joules);
  return joules;
}

EnergySummary EnergyMeter::summary(Seconds total_time_s, std::optional<Seconds> time_to_target_s,
                                   std::optional<double> final_accuracy) const {
  EnergySummary s;
  s.reason = reason_;
  if (!has_figures()) return s;
  s.wait = scenarios::phase_power_name(spec_.wait);
  s.slow_with_slack = spec_.slow_with_slack;
  if (spec_.objective) s.objective = scenarios::objective_name(*spec_.objective);
  if (spec_.slowing_decision != scenarios::SlowingDecision::kOracle) {
    s.slowing_decision = scenarios::slowing_decision_name(spec_.slowing_decision);
  }
  s.sources = sources();
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const WorkerEnergy e = settled(k, total_time_s);
    s.compute_j += e.compute_j, s.comm_j += e.comm_j, s.wait_j += e.wait_j, s.idle_j += e.idle_j;
    s.workers.push_back(e);
  }
  s.joules = s.compute_j + s.comm_j + s.wait_j + s.idle_j;
  s.average_power_w = total_time_s > 0.0 ? s.joules / total_time_s : 0.0;
  if (law_slowed_) {
    // The same factors under each exponent of the band: the run's joules, and the slowing's saving against the same
    // phases computed at full speed and then waiting.
    for (int a = 1; a <= 3; ++a) {
      const double joules = s.joules - slowed_j_ + band_j_[a - 1];
      const double saving = unslowed_j_ - band_j_[a - 1];
      const double without = joules + saving;
      s.alpha_band.push_back({static_cast<double>(a), joules, without > 0.0 ? 100.0 * saving / without : 0.0});
    }
  }
  if (time_to_target_s) {
    // Everything the run's total counts up to the evaluation that reached the target (evaluation()).
    for (const auto& [t, j] : evaluations_) {
      if (t >= *time_to_target_s) {
        s.energy_to_target_j = j;
        break;
      }
    }
  }
  if (final_accuracy && *final_accuracy > 0.0) s.joules_per_accuracy_point = s.joules / (*final_accuracy * 100.0);
  return s;
}

std::vector<std::pair<std::string, std::string>> EnergyMeter::sources() const {
  // Each figure's labels over the workers, in worker order, each once: one string when all workers agree.
  std::vector<std::pair<std::string, std::vector<std::string>>> fields{{"busy", {}}, {"idle", {}}, {"wait", {}},
                                                                       {"comm", {}}};
  const auto add = [](std::vector<std::string>& labels, std::string label) {
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(std::move(label));
  };
  for (const WorkerPower& p : power_) {
    add(fields[0].second, p.device.busy_from);
    add(fields[1].second, p.device.idle_from);
    add(fields[2].second, phase_power_source(spec_.wait, p.device, p.gpu, false));
    add(fields[3].second, phase_power_source(spec_.comm, p.device, p.gpu, true));
  }
  if (spec_.slow_with_slack || spec_.objective) {
    fields.push_back({"slowing", {}});
    for (const WorkerPower& p : power_) add(fields.back().second, p.slowing_source(spec_.power_exponent));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [field, labels] : fields) {
    std::string joined;
    for (const std::string& l : labels) joined += (joined.empty() ? "" : " | ") + l;
    out.emplace_back(field, joined);
  }
  return out;
}

std::string energy_csv(const EnergySummary& s) {
  if (s.source == "modelled-cputime") {
    std::string out = "worker,busy_j,idle_j,joules,cpu_s,allotted_core_s\n";
    for (std::size_t k = 0; k < s.workers.size(); ++k) {
      const WorkerEnergy& e = s.workers[k];
      out += std::to_string(k);
      for (double v : {e.compute_j, e.idle_j, e.joules(), e.cpu_s, e.allotted_core_s}) out += ',' + format_g(v, 17);
      out += '\n';
    }
    return out;
  }
  std::string out = "worker,compute_j,comm_j,wait_j,idle_j,joules,compute_s,comm_s,wait_s,idle_s\n";
  for (std::size_t k = 0; k < s.workers.size(); ++k) {
    const WorkerEnergy& e = s.workers[k];
    out += std::to_string(k);
    for (double v : {e.compute_j, e.comm_j, e.wait_j, e.idle_j, e.joules(), e.compute_s, e.comm_s, e.wait_s, e.idle_s}) {
      out += ',' + format_g(v, 17);
    }
    out += '\n';
  }
  return out;
}

}  // namespace omnilearn::run
