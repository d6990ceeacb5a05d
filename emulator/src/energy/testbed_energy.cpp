#include "omnilearn/emulator/testbed_energy.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace omnilearn::emulator {

run::WorkerEnergy modelled_worker_energy(const CpuTimePower& p, Seconds cpu_s, Seconds window_s) {
  const double scale = p.share_cores > 0.0 ? p.node_cores / p.share_cores : 0.0;
  run::WorkerEnergy e;
  e.cpu_s = std::max(0.0, cpu_s) * scale;
  e.allotted_core_s = p.node_cores * std::max(0.0, window_s);
  e.compute_j = e.cpu_s * p.busy_w;
  e.idle_j = std::max(0.0, e.allotted_core_s - e.cpu_s) * p.idle_w;
  return e;
}

Result<Seconds> parse_proc_stat_cpu_s(std::string_view stat, double ticks_per_s) {
  // pid (comm) state ...: comm may hold spaces and parentheses, so the fields count from the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || !(ticks_per_s > 0.0)) return Status::parse_error("not a /proc/PID/stat line");
  std::istringstream in{std::string(stat.substr(close + 1))};
  std::vector<std::string> fields;  // fields[0] is field 3 (the state); utime is field 14, stime 15 (proc(5))
  for (std::string f; fields.size() < 13 && in >> f;) fields.push_back(std::move(f));
  if (fields.size() < 13) return Status::parse_error("a /proc/PID/stat line without utime and stime");
  double ticks = 0.0;
  for (std::size_t i : {11u, 12u}) {
    char* end = nullptr;
    const double v = std::strtod(fields[i].c_str(), &end);
    if (end == fields[i].c_str() || *end != '\0' || v < 0.0) {
      return Status::parse_error("expected a number of clock ticks, got '" + fields[i] + "'");
    }
    ticks += v;
  }
  return ticks / ticks_per_s;
}

Result<Seconds> process_cpu_s(pid_t pid) {
  const std::string file = "/proc/" + std::to_string(pid) + "/stat";
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return Status::io_error("cannot read " + file);
  auto cpu = parse_proc_stat_cpu_s(line, static_cast<double>(::sysconf(_SC_CLK_TCK)));
  if (!cpu) return Status::parse_error(file + ": " + cpu.status().message());
  return cpu;
}

std::optional<run::EnergySummary> gpu_run_energy(std::optional<run::EnergySummary> phases,
                                                 std::optional<run::EnergySummary> counted, const std::string& counter,
                                                 const std::string& counter_reason) {
  if (counted && counted->source == "measured") {
    run::EnergySummary e = std::move(*counted);
    if (phases && phases->reason.empty()) e.modelled_j = phases->joules;
    e.note = counter +
             ": every GPU of the host over the training window, idle GPUs and other processes' work included, the CPU "
             "packages not (RAPL is not read on a GPU run); modelled_j: the phase records at the scenario's power "
             "figures, as the simulator charges them";
    return e;
  }
  std::string why = counter.empty() ? "no GPU energy counter (" + counter_reason + ")"
                                    : "the GPU energy counter (" + counter + ") could not be read";
  if (counted && !counted->reason.empty()) why += ": " + counted->reason;
  if (!phases || !phases->reason.empty()) {
    run::EnergySummary e;
    e.reason = why + (phases ? "; " + phases->reason : "");
    return e;
  }
  phases->source = "modelled-phases";
  phases->note =
      "GPU workers charged from their phase records at the scenario's power figures, as the simulator "
      "charges them (modelled, not measured): " +
      why;
  return phases;
}

TestbedEnergyMeter::Reading TestbedEnergyMeter::read(Seconds now_s, bool cpu) {
  Reading r;
  r.t_s = now_s;
  if (s_.counter) {
    auto j = s_.counter->joules();
    if (j) {
      r.joules = *j;
      latest_joules_ = *j;
    } else if (error_.empty()) {
      error_ = j.status().message();
    }
  }
  if (cpu && s_.cpu_times) {
    auto c = s_.cpu_times();
    if (c) {
      r.cpu_s = std::move(c).value();
    } else if (error_.empty()) {
      error_ = c.status().message();
    }
  }
  return r;
}

void TestbedEnergyMeter::start(Seconds now_s) {
  if (first_) return;
  Reading r = read(now_s, /*cpu=*/true);
  first_ = r;
  last_ = std::move(r);
}

void TestbedEnergyMeter::sample(Seconds now_s, bool window_end) {
  if (!first_) return;
  Reading r = read(now_s, window_end);
  if (!window_end) return;
  // The window ends here only when what the first reading holds could be read again.
  if (first_->joules && !r.joules) return;
  if (first_->cpu_s && (!r.cpu_s || r.cpu_s->size() != first_->cpu_s->size())) return;
  last_ = std::move(r);
}

run::EnergySummary TestbedEnergyMeter::summary() const {
  run::EnergySummary e;
  const bool measured = s_.counter && first_ && first_->joules;
  const bool modelled = !s_.workers.empty() && first_ && first_->cpu_s && first_->cpu_s->size() == s_.workers.size();
  if (!measured && !modelled) {
    std::string why =
        s_.counter ? "the energy counters could not be read" : "no energy counters (" + s_.counter_reason + ")";
    if (!error_.empty()) why += "; " + error_;
    why += s_.workers.empty() ? "; " + s_.figures_reason
           : first_           ? "; the workers' CPU time could not be read"
                              : "; training never started";
    e.reason = why;
    return e;
  }
  const Seconds window = last_->t_s - first_->t_s;
  e.window_s = window;
  double modelled_j = 0.0, cpu_s = 0.0;
  std::vector<run::WorkerEnergy> rows;
  if (modelled) {
    for (std::size_t k = 0; k < s_.workers.size(); ++k) {
      const Seconds used = (*last_->cpu_s)[k] - (*first_->cpu_s)[k];
      run::WorkerEnergy w = modelled_worker_energy(s_.workers[k], used, window);
      modelled_j += w.joules();
      cpu_s += used;
      e.compute_j += w.compute_j;
      e.idle_j += w.idle_j;
      rows.push_back(w);
    }
    e.cpu_s = cpu_s;
  }
  if (measured) {
    e.source = "measured";
    e.joules = *last_->joules - *first_->joules;
    if (modelled) e.modelled_j = modelled_j;
    e.note = s_.counter->description() +
             ": the whole host over the training window, its idle power and every other process included (the "
             "simulator charges the workers' emulated nodes only)";
  } else {
    e.source = "modelled-cputime";
    e.joules = modelled_j;
    e.workers = std::move(rows);
    e.note = "modelled from the CPU time of " + s_.cpu_time_origin +
             " at the scenario's power figures (busy per core-second used, idle for the rest of the "
             "allotted core-time), scaled to the emulated nodes' cores; no energy counters: " +
             s_.counter_reason;
  }
  e.average_power_w = window > 0.0 ? e.joules / window : 0.0;
  return e;
}

}  // namespace omnilearn::emulator
