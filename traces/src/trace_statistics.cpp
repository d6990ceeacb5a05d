#include "omnilearn/traces/trace_statistics.h"

#include <algorithm>
#include <limits>

namespace omnilearn::traces {

TraceStatistics compute_statistics(const AvailabilityTrace& trace) {
  TraceStatistics st;
  const Seconds d = trace.duration();
  st.duration_s = d;
  std::vector<Seconds> all_times{0.0};
  for (WorkerId w = 0; w < trace.worker_count(); ++w) {
    WorkerStatistics ws;
    ws.name = trace.worker_name(w);
    const std::vector<Seconds> times = d > 0.0 ? trace.change_times_in(w, 0.0, d) : std::vector<Seconds>{0.0};
    ws.min_fraction = std::numeric_limits<double>::infinity();
    ws.max_fraction = -std::numeric_limits<double>::infinity();
    double area = 0.0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double f = trace.fraction_at(w, times[i]);
      const Seconds len = (i + 1 < times.size() ? times[i + 1] : d) - times[i];
      area += f * len;
      if (f == 0.0) ws.down_s += len;
      ws.min_fraction = std::min(ws.min_fraction, f);
      ws.max_fraction = std::max(ws.max_fraction, f);
      if (i > 0 && f != trace.fraction_at(w, times[i - 1])) ++ws.change_count;
    }
    ws.mean_fraction = d > 0.0 ? area / d : trace.fraction_at(w, 0.0);
    all_times.insert(all_times.end(), times.begin(), times.end());
    st.workers.push_back(std::move(ws));
  }
  std::sort(all_times.begin(), all_times.end());
  all_times.erase(std::unique(all_times.begin(), all_times.end()), all_times.end());

  st.min_live_workers = trace.worker_count();
  double weighted = 0.0;
  for (std::size_t i = 0; i < all_times.size(); ++i) {
    const Seconds t = all_times[i];
    HeterogeneityStep step{t, 1.0, 0};
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0.0;
    for (WorkerId w = 0; w < trace.worker_count(); ++w) {
      const double f = trace.fraction_at(w, t);
      if (f > 0.0) {
        ++step.live_workers;
        lo = std::min(lo, f);
        hi = std::max(hi, f);
      }
    }
    if (step.live_workers >= 2) step.level = hi / lo;
    if (!st.heterogeneity.empty() && st.heterogeneity.back().level == step.level &&
        st.heterogeneity.back().live_workers == step.live_workers) {
      continue;
    }
    st.heterogeneity.push_back(step);
  }
  st.mean_heterogeneity = 0.0;
  st.max_heterogeneity = 1.0;
  for (std::size_t i = 0; i < st.heterogeneity.size(); ++i) {
    const HeterogeneityStep& s = st.heterogeneity[i];
    const Seconds end = i + 1 < st.heterogeneity.size() ? st.heterogeneity[i + 1].time_s : d;
    weighted += s.level * (end - s.time_s);
    st.max_heterogeneity = std::max(st.max_heterogeneity, s.level);
    st.min_live_workers = std::min(st.min_live_workers, s.live_workers);
  }
  st.mean_heterogeneity = d > 0.0 ? weighted / d : st.heterogeneity.front().level;
  return st;
}

}  // namespace omnilearn::traces
