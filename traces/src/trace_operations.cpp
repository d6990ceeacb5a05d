#include "omnilearn/traces/trace_operations.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace omnilearn::traces {
namespace {

std::vector<WorkerSeries> copy_workers(const AvailabilityTrace& trace) { return trace.workers(); }

std::string worker_label(std::size_t j) { std::string s = "w";
  s += std::to_string(j);
  return s; }

}  // namespace

Result<AvailabilityTrace> select_workers(const AvailabilityTrace& trace, const std::vector<std::string>& names) {
  std::vector<WorkerSeries> out;
  for (const std::string& n : names) {
    const auto w = trace.find_worker(n);
    if (!w) return Status::not_found("select: no worker named '" + n + "' in the trace");
    out.push_back(trace.workers()[*w]);
  }
  return AvailabilityTrace::create(std::move(out), trace.duration(), trace.loop_after_s());
}

Result<AvailabilityTrace> rename_workers(const AvailabilityTrace& trace,
                                         const std::vector<std::pair<std::string, std::string>>& renames) {
  std::vector<WorkerSeries> out = copy_workers(trace);
  for (const auto& [from, to] : renames) {
    const auto w = trace.find_worker(from);
    if (!w) return Status::not_found("rename: no worker named '" + from + "' in the trace");
    out[*w].name = to;
  }
  return AvailabilityTrace::create(std::move(out), trace.duration(), trace.loop_after_s());
}

Result<AvailabilityTrace> map_round_robin(const AvailabilityTrace& trace, std::size_t worker_count) {
  if (worker_count == 0) return Status::invalid_argument("map: worker count is 0; expected at least 1");
  std::vector<WorkerSeries> out;
  for (std::size_t j = 0; j < worker_count; ++j) {
    out.push_back({worker_label(j), trace.workers()[j % trace.worker_count()].points});
  }
  return AvailabilityTrace::create(std::move(out), trace.duration(), trace.loop_after_s());
}

Result<AvailabilityTrace> map_by_names(const AvailabilityTrace& trace, const std::vector<std::string>& node_names) {
  if (node_names.empty()) return Status::invalid_argument("map: node list is empty; expected at least one");
  std::vector<WorkerSeries> out;
  for (std::size_t j = 0; j < node_names.size(); ++j) {
    const auto w = trace.find_worker(node_names[j]);
    if (!w) return Status::not_found("map: no trace node named '" + node_names[j] + "'");
    out.push_back({worker_label(j), trace.workers()[*w].points});
  }
  return AvailabilityTrace::create(std::move(out), trace.duration(), trace.loop_after_s());
}

Result<AvailabilityTrace> scale_time(const AvailabilityTrace& trace, double factor) {
  if (!std::isfinite(factor) || factor <= 0.0) {
    return Status::invalid_argument("scale: factor " + std::to_string(factor) + " is invalid; expected > 0");
  }
  std::vector<WorkerSeries> out = copy_workers(trace);
  for (WorkerSeries& w : out) {
    for (TracePoint& p : w.points) p.time_s *= factor;
  }
  std::optional<Seconds> loop = trace.loop_after_s();
  if (loop) *loop *= factor;
  return AvailabilityTrace::create(std::move(out), trace.duration() * factor, loop);
}

Result<AvailabilityTrace> scale_to_duration(const AvailabilityTrace& trace, Seconds target_s) {
  if (!(target_s > 0.0) || !std::isfinite(target_s)) {
    return Status::invalid_argument("scale: target duration is invalid; expected > 0 s");
  }
  if (trace.duration() <= 0.0) {
    return Status::invalid_argument("scale: the trace has zero duration; it cannot be scaled to a length");
  }
  return scale_time(trace, target_s / trace.duration());
}

Result<AvailabilityTrace> clip(const AvailabilityTrace& trace, Seconds t0_s, Seconds t1_s) {
  if (!std::isfinite(t0_s) || !std::isfinite(t1_s) || t0_s < 0.0 || t1_s <= t0_s) {
    return Status::invalid_argument("clip: window [" + std::to_string(t0_s) + ", " + std::to_string(t1_s) +
                                    ") is invalid; expected 0 <= t0 < t1");
  }
  std::vector<WorkerSeries> out;
  for (WorkerId w = 0; w < trace.worker_count(); ++w) {
    WorkerSeries s{trace.worker_name(w), {}};
    for (Seconds t : trace.change_times_in(w, t0_s, t1_s)) s.points.push_back({t - t0_s, trace.fraction_at(w, t)});
    out.push_back(std::move(s));
  }
  return AvailabilityTrace::create(std::move(out), t1_s - t0_s);
}

Result<AvailabilityTrace> resample(const AvailabilityTrace& trace, Seconds step_s) {
  if (!std::isfinite(step_s) || step_s <= 0.0) {
    return Status::invalid_argument("resample: step is invalid; expected > 0 s");
  }
  const Seconds d = trace.duration();
  std::vector<WorkerSeries> out;
  for (WorkerId w = 0; w < trace.worker_count(); ++w) {
    WorkerSeries s{trace.worker_name(w), {}};
    const std::vector<Seconds> times = trace.change_times_in(w, 0.0, d);
    std::size_t i = 0;
    for (std::size_t k = 0; static_cast<double>(k) * step_s < d || k == 0; ++k) {
      const Seconds a = static_cast<double>(k) * step_s;
      const Seconds b = std::min(a + step_s, d);
      if (b <= a) {  // zero-length trace: one sample
        s.points.push_back({0.0, trace.fraction_at(w, 0.0)});
        break;
      }
      while (i + 1 < times.size() && times[i + 1] <= a) ++i;
      double area = 0.0;
      Seconds from = a;
      for (std::size_t j = i; j < times.size() && times[j] < b; ++j) {
        const Seconds to = (j + 1 < times.size()) ? std::min(times[j + 1], b) : b;
        if (to > from) area += trace.fraction_at(w, std::max(times[j], a)) * (to - from);
        from = std::max(from, to);
      }
      s.points.push_back({a, std::clamp(area / (b - a), 0.0, 1.0)});
    }
    out.push_back(std::move(s));
  }
  return AvailabilityTrace::create(std::move(out), d, trace.loop_after_s());
}

Result<AvailabilityTrace> combine(const AvailabilityTrace& base, const AvailabilityTrace& noise) {
  if (base.worker_count() != noise.worker_count()) {
    return Status::invalid_argument("combine: base has " + std::to_string(base.worker_count()) +
                                    " workers and noise has " + std::to_string(noise.worker_count()) +
                                    "; expected the same count (map one onto the other first)");
  }
  const Seconds d = std::max(base.duration(), noise.duration());
  std::vector<WorkerSeries> out;
  for (WorkerId w = 0; w < base.worker_count(); ++w) {
    std::vector<Seconds> times = base.change_times_in(w, 0.0, d);
    const std::vector<Seconds> more = noise.change_times_in(w, 0.0, d);
    times.insert(times.end(), more.begin(), more.end());
    if (times.empty()) times.push_back(0.0);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    WorkerSeries s{base.worker_name(w), {}};
    for (Seconds t : times) {
      const double b = base.fraction_at(w, t);
      const double n = noise.fraction_at(w, t);
      s.points.push_back({t, (b == 0.0 || n == 0.0) ? 0.0 : std::clamp(b * n, 0.0, 1.0)});
    }
    out.push_back(std::move(s));
  }
  return AvailabilityTrace::create(std::move(out), d);
}

}  // namespace omnilearn::traces
