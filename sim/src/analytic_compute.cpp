#include "analytic_compute.h"

namespace omnilearn::sim {

ComputeEnd analytic_compute_end(AvailabilityModel& availability, WorkerId k, Seconds start_s, double flops,
                                double peak_flops) {
  // SimGrid's maxmin/precision x surf/precision, the defaults cpu_is_default_lazy_cas01() requires: less remaining
  // work than this counts as none.
  constexpr double kRemainsPrecision = 1e-5 * 1e-9;
  double rate = availability.speed_scale_at(k, start_s) * peak_flops;
  // A worker that only goes down and up has no speed profile in SimGrid: its changes re-date nothing there.
  const bool profiled = availability.has_speed_profile(k);
  double remains = flops;
  Seconds anchor_s = start_s;  // SimGrid's last update of the remaining work
  Seconds end_s = start_s + remains / rate;
  while (true) {
    const AvailabilityModel::SpeedChange& change = availability.next_speed_change(k);
    if (!(change.time_s < end_s) && !(change.down && change.announced_s < end_s)) return {end_s, false};
    if (change.time_s < end_s && profiled) {
      // A change on the busy host, even to the same scale, makes SimGrid update the work and date its end anew.
      remains -= rate * (change.time_s - anchor_s);
      if (remains < kRemainsPrecision) remains = 0.0;
      anchor_s = change.time_s;
      rate = change.scale * peak_flops;
      end_s = anchor_s + (remains > 0.0 ? remains / rate : 0.0);
    }
    // A down leaves the reading before it: the next read (a later start) passes it.
    if (change.down && change.announced_s < end_s) return {change.announced_s, true};
    availability.pass_speed_change(k);
  }
}

}  // namespace omnilearn::sim
