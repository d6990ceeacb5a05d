#include "omnilearn/sim/cluster_energy.h"

#include <algorithm>
#include <utility>

#include "omnilearn/run/energy_meter.h"

namespace omnilearn::sim {

Status check_cluster_energy(const ClusterEnergyOptions& options, const std::vector<std::string>& kinds) {
  for (const std::string& kind : kinds) {
    const auto it = options.power.find(kind);
    if (it == options.power.end() || !it->second.idle_w || !it->second.has_busy()) {
      return Status::invalid_argument(
          "energy: no power figures (idle and busy) for device kind '" + kind +
          "' (the shipped kinds have them, docs/energy.md; a jobs scenario's energy.gpu gives them)");
    }
  }
  return Status::ok();
}

ClusterEnergyMeter::ClusterEnergyMeter(ClusterEnergyOptions options, std::size_t jobs)
    : options_(std::move(options)), jobs_(jobs) {}

double ClusterEnergyMeter::busy_w(const std::string& kind, double batch) const {
  return options_.power.at(kind).busy_at(batch);
}

double ClusterEnergyMeter::phase_w(const scenarios::PhasePower& p, const std::string& kind, double batch,
                                   bool comm) const {
  const scenarios::DevicePower& d = options_.power.at(kind);
  return run::phase_power_w(p, d.idle_w.value_or(0.0), busy_w(kind, batch), 1.0, /*gpu=*/true, comm, d.blocked_w);
}

void ClusterEnergyMeter::held(std::size_t job, const std::string& kind, Seconds device_s, double share) {
  jobs_[job].held_s[kind] += device_s * share;
}

void ClusterEnergyMeter::add(Job& job, const Charge& c, double times) {
  job.e.compute_j += times * c.e.compute_j;
  job.e.comm_j += times * c.e.comm_j;
  job.e.wait_j += times * c.e.wait_j;
  for (const auto& [kind, j] : c.joules) job.phase_j[kind] += times * j;
  for (const auto& [kind, s] : c.device_s) job.phase_s[kind] += times * s;
}

void ClusterEnergyMeter::step(std::size_t job, const std::vector<std::string>& kinds,
                              const std::vector<double>& batches, const std::vector<Seconds>& compute_s,
                              const std::vector<Seconds>& wait_s, Seconds comm_s, double share) {
  Charge c;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const double compute_j = share * busy_w(kinds[k], batches[k]) * compute_s[k];
    const double wait_j = share * phase_w(options_.wait, kinds[k], batches[k], false) * wait_s[k];
    const double comm_j = share * phase_w(options_.comm, kinds[k], batches[k], true) * comm_s;
    c.e.compute_j += compute_j;
    c.e.wait_j += wait_j;
    c.e.comm_j += comm_j;
    c.joules[kinds[k]] += compute_j + wait_j + comm_j;
    c.device_s[kinds[k]] += share * (compute_s[k] + wait_s[k] + comm_s);
  }
  Job& j = jobs_[job];
  add(j, c, 1.0);
  j.last = std::move(c);
}

void ClusterEnergyMeter::repeat_last(std::size_t job, double steps) {
  Job& j = jobs_[job];
  add(j, j.last, steps);
}

void ClusterEnergyMeter::busy(std::size_t job, const std::vector<std::string>& kinds,
                              const std::vector<double>& batches, Seconds seconds, double share) {
  Charge c;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const double j = share * busy_w(kinds[k], batches[k]) * seconds;
    c.e.compute_j += j;
    c.joules[kinds[k]] += j;
    c.device_s[kinds[k]] += share * seconds;
  }
  add(jobs_[job], c, 1.0);
}

ClusterEnergy ClusterEnergyMeter::summary(const std::map<std::string, int>& capacity, Seconds makespan_s) const {
  ClusterEnergy out;
  out.wait = scenarios::phase_power_name(options_.wait);
  out.comm = scenarios::phase_power_name(options_.comm);
  std::map<std::string, double> held_s;
  for (const auto& [kind, n] : capacity) {
    out.kinds[kind].idle_w = options_.power.at(kind).idle_w.value_or(0.0);
    held_s[kind] = 0.0;
  }
  for (const Job& job : jobs_) {
    JobEnergy e = job.e;
    for (const auto& [kind, s] : job.held_s) {
      // Held in no phase (restoring, its actor not yet stepping): idle. What is left by the rounding of the steps'
      // times (a relative 1e-9, either way) takes none.
      const auto phase = job.phase_s.find(kind);
      double rest_s = s - (phase == job.phase_s.end() ? 0.0 : phase->second);
      if (rest_s <= 1e-9 * s) rest_s = 0.0;
      const double idle_j = rest_s * out.kinds[kind].idle_w;
      e.idle_j += idle_j;
      out.kinds[kind].jobs_j += idle_j;
      held_s[kind] += s;
    }
    for (const auto& [kind, j] : job.phase_j) out.kinds[kind].jobs_j += j;
    out.jobs_j += e.joules();
    out.jobs.push_back(e);
  }
  for (auto& [kind, k] : out.kinds) {
    k.unallocated_device_s = std::max(0.0, capacity.at(kind) * makespan_s - held_s[kind]);
    k.unallocated_idle_j = k.unallocated_device_s * k.idle_w;
    out.unallocated_idle_j += k.unallocated_idle_j;
  }
  out.total_j = out.jobs_j + out.unallocated_idle_j;
  out.average_power_w = makespan_s > 0.0 ? out.total_j / makespan_s : 0.0;
  out.sources = sources(capacity);
  return out;
}

std::vector<std::pair<std::string, std::string>> ClusterEnergyMeter::sources(
    const std::map<std::string, int>& capacity) const {
  std::vector<std::pair<std::string, std::string>> out{{"busy", ""}, {"idle", ""}, {"wait", ""}, {"comm", ""}};
  for (const auto& [kind, n] : capacity) {
    const scenarios::DevicePower& d = options_.power.at(kind);
    const std::string labels[] = {d.busy_from, d.idle_from,
                                  run::phase_power_source(options_.wait, d, /*gpu=*/true, /*comm=*/false),
                                  run::phase_power_source(options_.comm, d, /*gpu=*/true, /*comm=*/true)};
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].second +=
          (out[i].second.empty() ? "" : " | ") + kind + ": " + (labels[i].empty() ? "scenario" : labels[i]);
    }
  }
  return out;
}

}  // namespace omnilearn::sim
