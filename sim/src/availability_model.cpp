#include "availability_model.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <string>
#include <tuple>

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include "omnilearn/base/format.h"

namespace omnilearn::sim {
namespace {

constexpr WorkerId kNoWorker = std::numeric_limits<WorkerId>::max();

}  // namespace

Result<std::unique_ptr<AvailabilityModel>> AvailabilityModel::create(const run::AvailabilityPlan& plan) {
  const std::size_t n = plan.worker_count();
  std::unique_ptr<AvailabilityModel> m(new AvailabilityModel());
  m->epoch_level_.assign(n, 1.0);
  m->time_level_.assign(n, 1.0);
  m->pstate_fraction_.assign(n, 1.0);
  m->pstate_fractions_.assign(n, {});
  m->timed_.assign(n, {});
  // Each distinct partial level of an epoch schedule is a power state of its worker's host.
  for (const scenarios::AvailabilityPhase& phase : plan.epoch_phases()) {
    for (std::size_t k = 0; k < n; ++k) {
      const double f = phase.fractions[k];
      auto& ps = m->pstate_fractions_[k];
      if (f > 0.0 && f < 1.0 && std::find(ps.begin(), ps.end(), f) == ps.end()) ps.push_back(f);
    }
  }
  m->plan_ = &plan;
  if (const auto& trace = plan.timed()) {
    for (std::size_t k = 0; k < n; ++k) m->timed_[k] = trace->changes(static_cast<WorkerId>(k));
    m->period_s_ = trace->loop_after_s().value_or(0.0);
  }
  // Every reading starts before the first point, dated at its time as SimGrid dates a profile's first event. A
  // worker without a profile reads the same scale: a level of 1 or a down keeps SimGrid's scale of 1.
  m->speed_readings_.assign(n, {});
  for (WorkerId k = 0; k < n; ++k) {
    SpeedReading& r = m->speed_readings_[k];
    if (!m->timed_[k].empty()) r.next = m->speed_change(k, r, m->timed_[k].front().time_s);
  }
  return m;
}

std::size_t AvailabilityModel::never_down_count() const {
  std::vector<bool> down(worker_count(), false);
  for (const scenarios::AvailabilityPhase& phase : plan_->epoch_phases()) {
    for (WorkerId k = 0; k < down.size(); ++k) down[k] = down[k] || !(phase.fractions[k] > 0.0);
  }
  std::size_t count = 0;
  for (WorkerId k = 0; k < down.size(); ++k) {
    const auto& points = timed_[k];
    const bool goes_down = down[k] || std::any_of(points.begin(), points.end(),
                                                  [](const traces::TracePoint& p) { return !(p.fraction > 0.0); });
    if (!goes_down) ++count;
  }
  return count;
}

bool AvailabilityModel::has_speed_profile(WorkerId k) const {
  // Only a partial level changes the host's speed: a worker that only goes down and up keeps SimGrid's scale of 1
  // (the drivers cancel a down worker's work). Such a profile would also cost more than nothing: SimGrid orders the
  // events of several profiles due at one instant by their addresses in memory, which can reorder the workers'
  // simultaneous completions between two machines (the same scenario and seed must give the same bytes anywhere).
  const auto& points = timed_[k];
  return std::any_of(points.begin(), points.end(),
                     [](const traces::TracePoint& p) { return p.fraction > 0.0 && p.fraction != 1.0; });
}

Status AvailabilityModel::install(const SimPlatform& platform) {
  // Only a platform file's host may serve two workers (the other platforms give each worker its own).
  std::vector<WorkerId> profiled(platform.shared_host_cores.size(), kNoWorker);
  for (WorkerId k = 0; k < platform.shared_host.size(); ++k) {
    if (!has_speed_profile(k)) continue;
    WorkerId& first = profiled[platform.shared_host[k]];
    if (first != kNoWorker) {
      return Status::invalid_argument("availability: workers " + std::to_string(first) + " and " + std::to_string(k) +
                                      " share host '" + platform.workers[k]->get_name() +
                                      "', whose speed one profile sets in SimGrid: give each worker whose speed "
                                      "changes a host of its own (cluster.platform.hosts)");
    }
    first = k;
  }
  const std::vector<simgrid::s4u::Host*>& hosts = platform.workers;
  hosts_ = hosts;
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    const auto& points = timed_[k];
    if (!has_speed_profile(k)) continue;                   // only downs and ups, or none: no profile
    if (points.size() < 2 && period_s_ <= 0.0) continue;  // constant: apply_initial sets the level, no profile
    // Speed profile values multiply the power state's speed. While down the host keeps its last level: the
    // drivers cancel its work and give it none, so the value does not matter.
    std::string text;
    double last_up = 1.0;
    for (const traces::TracePoint& p : points) {
      if (p.fraction > 0.0) last_up = p.fraction;
      text += format_g(p.time_s) + " " + format_g(p.fraction > 0.0 ? p.fraction : last_up) + "\n";
    }
    // Built once per worker under a unique name (ProfileBuilder aborts on a name defined twice).
    hosts[k]->set_speed_profile(simgrid::kernel::profile::ProfileBuilder::from_string(
        "omnilearn-speed-" + std::to_string(k), text, period_s_ > 0.0 ? period_s_ : -1.0));
  }
  return Status::ok();
}

void AvailabilityModel::set_level(WorkerId k, double epoch_level, double time_level, Seconds now_s) {
  const double before = fraction(k);
  if (epoch_level != epoch_level_[k] && epoch_level > 0.0) {
    const auto& ps = pstate_fractions_[k];
    const auto it = std::find(ps.begin(), ps.end(), epoch_level);
    pstate_fraction_[k] = it == ps.end() ? 1.0 : *it;
    if (!hosts_.empty()) hosts_[k]->set_pstate(it == ps.end() ? 0 : static_cast<unsigned long>(it - ps.begin()) + 1);
  }
  epoch_level_[k] = epoch_level;
  time_level_[k] = time_level;
  if (fraction(k) != before && listener_) listener_(k, fraction(k), now_s);
}

void AvailabilityModel::apply_initial(Listener listener) {
  listener_ = std::move(listener);
  for (WorkerId k = 0; k < worker_count(); ++k) {
    const double time_level = timed_[k].empty() ? 1.0 : timed_[k].front().fraction;
    const std::vector<double>* epoch_levels = plan_->epoch_levels(0);
    const double epoch_level = epoch_levels != nullptr ? (*epoch_levels)[k] : 1.0;
    if (time_level != 1.0 && !hosts_.empty() && timed_[k].size() < 2 && period_s_ <= 0.0 && time_level > 0.0) {
      // A constant level without a profile: express it as a one-point profile.
      hosts_[k]->set_speed_profile(simgrid::kernel::profile::ProfileBuilder::from_string(
          "omnilearn-speed-" + std::to_string(k), "0 " + format_g(time_level) + "\n", -1.0));
    }
    set_level(k, epoch_level, time_level, 0.0);
  }
}

void AvailabilityModel::start(simgrid::s4u::Host* host) {
  for (const auto& points : timed_) {
    if (points.size() > 1) next_change_s_ = std::min(next_change_s_, points[1].time_s);
    if (period_s_ > 0.0 && !points.empty()) next_change_s_ = std::min(next_change_s_, period_s_);
  }
  if (!changes_pending()) return;
  simgrid::s4u::Actor::create("availability", host, [this] { run_actor(); })->daemonize();
}

void AvailabilityModel::run_actor() {
  // (time, worker, index into timed_[worker], cycle): a min-heap so changes apply in time order, ties by worker.
  using Next = std::tuple<Seconds, WorkerId, std::size_t, std::int64_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> queue;
  auto push_next = [&](WorkerId k, std::size_t index, std::int64_t cycle) {
    const auto& points = timed_[k];
    if (index >= points.size()) {
      if (period_s_ <= 0.0) return;
      index = 0, ++cycle;
    }
    queue.emplace(points[index].time_s + static_cast<double>(cycle) * period_s_, k, index, cycle);
  };
  for (WorkerId k = 0; k < worker_count(); ++k) push_next(k, 1, 0);
  while (!queue.empty()) {
    const auto [t, k, index, cycle] = queue.top();
    next_change_s_ = t;
    queue.pop();
    simgrid::s4u::this_actor::sleep_until(t);
    set_level(k, epoch_level_[k], timed_[k][index].fraction, t);
    push_next(k, index + 1, cycle);
  }
  next_change_s_ = std::numeric_limits<double>::infinity();
}

void AvailabilityModel::enter_epoch(std::int64_t epoch, Seconds now_s) {
  const std::vector<double>* levels = plan_->epoch_levels(epoch);
  if (levels == nullptr) return;
  for (WorkerId k = 0; k < worker_count(); ++k) set_level(k, (*levels)[k], time_level_[k], now_s);
}

AvailabilityModel::SpeedChange AvailabilityModel::speed_change(WorkerId k, const SpeedReading& reading,
                                                               Seconds time_s) const {
  const traces::TracePoint& p = timed_[k][reading.index];
  return SpeedChange{time_s, p.fraction > 0.0 ? p.fraction : reading.last_up, p.fraction <= 0.0,
                     p.time_s + static_cast<double>(reading.cycle) * period_s_};
}

double AvailabilityModel::speed_scale_at(WorkerId k, Seconds t) {
  while (speed_readings_[k].next.time_s <= t) pass_speed_change(k);
  return speed_readings_[k].scale;
}

void AvailabilityModel::pass_speed_change(WorkerId k) {
  SpeedReading& r = speed_readings_[k];
  const std::vector<traces::TracePoint>& points = timed_[k];
  r.scale = r.next.scale;
  if (!r.next.down) r.last_up = r.next.scale;
  // SimGrid's profile (ProfileBuilder::from_string) keeps the gaps between the text's times and dates each event
  // as the previous event's date plus its gap; a repeat's first gap is its time plus the rest of the period.
  Seconds gap_s = 0.0;
  if (r.index + 1 < points.size()) {
    ++r.index;
    gap_s = points[r.index].time_s - points[r.index - 1].time_s;
  } else if (period_s_ > 0.0) {
    r.index = 0, ++r.cycle, r.last_up = 1.0;
    gap_s = points.front().time_s + (period_s_ - points.back().time_s);
  } else {
    r.next = SpeedChange{};
    return;
  }
  r.next = speed_change(k, r, r.next.time_s + gap_s);
}

}  // namespace omnilearn::sim
