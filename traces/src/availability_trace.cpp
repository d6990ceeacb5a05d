#include "omnilearn/traces/availability_trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <utility>

#include "omnilearn/base/check.h"
#include "omnilearn/base/input_limits.h"

namespace omnilearn::traces {
namespace {

Status validate_name(const std::string& name) {
  if (name.empty()) return Status::invalid_argument("worker name is empty; expected a non-empty name");
  // Writers quote a name with ',', '"' or a newline (RFC 4180); readers trim whitespace around fields.
  if (name.front() == '#' || std::isspace(static_cast<unsigned char>(name.front())) != 0 ||
      std::isspace(static_cast<unsigned char>(name.back())) != 0) {
    return Status::invalid_argument("worker name '" + name +
                                    "' is not usable in a trace file; expected no leading '#' and no surrounding "
                                    "whitespace");
  }
  return Status::ok();
}

}  // namespace

Result<AvailabilityTrace> AvailabilityTrace::create(std::vector<WorkerSeries> workers,
                                                    std::optional<Seconds> duration_s,
                                                    std::optional<Seconds> loop_after_s) {
  if (workers.empty()) return Status::invalid_argument("trace has no workers; expected at least one");
  if (workers.size() > limits::kMaxWorkers) {
    return Status::invalid_argument("trace has " + std::to_string(workers.size()) + " workers; expected at most " +
                                    std::to_string(limits::kMaxWorkers));
  }
  std::size_t points = 0;
  for (const WorkerSeries& w : workers) points += w.points.size();
  if (points > limits::kMaxTracePoints) {
    return Status::invalid_argument("trace has " + std::to_string(points) + " points; expected at most " +
                                    std::to_string(limits::kMaxTracePoints));
  }
  std::set<std::string, std::less<>> names;
  Seconds last_change = 0.0;
  for (WorkerSeries& w : workers) {
    OMNI_RETURN_IF_ERROR(validate_name(w.name));
    if (!names.insert(w.name).second) {
      return Status::invalid_argument("worker '" + w.name + "' appears twice; expected unique names");
    }
    std::vector<TracePoint> normal;
    normal.reserve(w.points.size() + 1);
    for (const TracePoint& p : w.points) {
      if (!std::isfinite(p.time_s) || p.time_s < 0.0) {
        return Status::invalid_argument("worker '" + w.name + "': time " + std::to_string(p.time_s) +
                                        " is invalid; expected a finite time >= 0");
      }
      if (!std::isfinite(p.fraction) || p.fraction < 0.0 || p.fraction > 1.0) {
        return Status::invalid_argument("worker '" + w.name + "': fraction " + std::to_string(p.fraction) +
                                        " at t=" + std::to_string(p.time_s) + " is outside [0,1]");
      }
      if (!normal.empty() && p.time_s <= normal.back().time_s) {
        return Status::invalid_argument("worker '" + w.name + "': time " + std::to_string(p.time_s) +
                                        " is not after the previous change; expected strictly increasing times");
      }
      if (normal.empty() && p.time_s > 0.0) normal.push_back({0.0, 1.0});
      if (!normal.empty() && normal.back().fraction == p.fraction) continue;
      normal.push_back(p);
    }
    if (normal.empty()) normal.push_back({0.0, 1.0});
    last_change = std::max(last_change, normal.back().time_s);
    w.points = std::move(normal);
  }
  if (loop_after_s) {
    if (!std::isfinite(*loop_after_s) || *loop_after_s <= 0.0 || *loop_after_s <= last_change) {
      return Status::invalid_argument("loop_after_s=" + std::to_string(*loop_after_s) +
                                      " is invalid; expected a time after the last change (" +
                                      std::to_string(last_change) + " s)");
    }
  }
  if (duration_s) {
    if (!std::isfinite(*duration_s) || *duration_s < last_change) {
      return Status::invalid_argument("duration_s=" + std::to_string(*duration_s) +
                                      " is invalid; expected a time at or after the last change (" +
                                      std::to_string(last_change) + " s)");
    }
  }
  AvailabilityTrace trace;
  trace.workers_ = std::move(workers);
  trace.loop_after_s_ = loop_after_s;
  trace.duration_s_ = duration_s ? *duration_s : (loop_after_s ? *loop_after_s : last_change);
  return trace;
}

const std::string& AvailabilityTrace::worker_name(WorkerId worker) const {
  OMNI_CHECK(worker < workers_.size(), "worker index out of range");
  return workers_[worker].name;
}

std::optional<WorkerId> AvailabilityTrace::find_worker(std::string_view name) const {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (workers_[i].name == name) return static_cast<WorkerId>(i);
  }
  return std::nullopt;
}

const std::vector<TracePoint>& AvailabilityTrace::changes(WorkerId worker) const {
  OMNI_CHECK(worker < workers_.size(), "worker index out of range");
  return workers_[worker].points;
}

double AvailabilityTrace::fraction_at(WorkerId worker, Seconds t) const {
  const std::vector<TracePoint>& pts = changes(worker);
  if (t < 0.0) t = 0.0;
  if (loop_after_s_ && t >= *loop_after_s_) t = std::fmod(t, *loop_after_s_);
  // The last point with time <= t; points start at 0, so there is always one.
  auto it = std::upper_bound(pts.begin(), pts.end(), t,
                             [](Seconds v, const TracePoint& p) { return v < p.time_s; });
  return std::prev(it)->fraction;
}

std::vector<Seconds> AvailabilityTrace::change_times_in(WorkerId worker, Seconds t0, Seconds t1) const {
  const std::vector<TracePoint>& pts = changes(worker);
  std::vector<Seconds> out;
  if (!(t1 > t0)) return out;
  out.push_back(t0);
  const Seconds period = loop_after_s_ ? *loop_after_s_ : 0.0;
  Seconds base = 0.0;
  if (period > 0.0 && t0 >= period) base = std::floor(t0 / period) * period;
  while (true) {
    for (const TracePoint& p : pts) {
      const Seconds t = base + p.time_s;
      if (t >= t1) return out;
      if (t > t0) out.push_back(t);
    }
    if (period <= 0.0) return out;
    base += period;
    if (base >= t1) return out;
  }
}

}  // namespace omnilearn::traces
