// AvailabilityModel: a run's availability plan (run/availability_plan.h) turned into what
// SimGrid and the drivers need: power states for epoch schedules, one speed profile per worker for timed
// changes, and a daemon actor that announces every change at its simulated time. Not thread-safe: it lives in
// the simulation thread; once start() ran it must not move (its actor holds `this`).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <simgrid/forward.h>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/run/availability_plan.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/traces/availability_trace.h"
#include "platform_builder.h"

namespace omnilearn::sim {

class AvailabilityModel {
 public:
  // Called for every applied change: worker, its new fraction of nominal speed (0 = down), simulated time.
  using Listener = std::function<void(WorkerId, double, Seconds)>;

  // The run's availability plan (resolved once: epoch phases, timed changes) in SimGrid's terms. `plan` must
  // outlive the model.
  static Result<std::unique_ptr<AvailabilityModel>> create(const run::AvailabilityPlan& plan);

  // False when install() attaches a speed profile that does not repeat (SimGrid's cpu/optim:TI refuses those).
  bool speed_profiles_repeat() const {
    if (period_s_ > 0.0) return true;
    for (WorkerId k = 0; k < timed_.size(); ++k) {
      if (timed_[k].size() >= 2 && has_speed_profile(k)) return false;
    }
    return true;
  }
  // Extra power-state fractions per worker (epoch schedules switch between them with Host::set_pstate).
  const std::vector<std::vector<double>>& pstate_fractions() const { return pstate_fractions_; }
  // Builds each worker's speed profile once and attaches it to its host. Call after the platform is built, before
  // running. Fails when two workers that change speed share a host (SimGrid gives a host one speed profile).
  Status install(const SimPlatform& platform);
  // Applies the levels in force at time 0 / epoch 0 (pstates included) and reports those that are not 1 to
  // `listener`, which is kept for later changes. Call before the engine runs.
  void apply_initial(Listener listener);
  // Starts a daemon actor on `host` that reports each timed change at its time. Call before the engine runs.
  void start(simgrid::s4u::Host* host);
  // Applies an epoch schedule's levels for `epoch` (from an actor, at an epoch boundary), reporting changes.
  void enter_epoch(std::int64_t epoch, Seconds now_s);

  double fraction(WorkerId k) const { return epoch_level_[k] * time_level_[k]; }
  // The fraction of its nominal speed that worker k's host computes at in its power state (1 in state 0): the
  // host's Host::get_speed() over the node's speed_flops, whether or not the platform has the host.
  double pstate_fraction(WorkerId k) const { return pstate_fraction_[k]; }
  // How many workers never go down (no epoch phase or timed change takes them to 0): a lower bound on a BSP step's
  // participants, every live worker getting a batch of at least the policy's min_batch >= 1.
  std::size_t never_down_count() const;
  bool is_down(WorkerId k) const { return fraction(k) <= 0.0; }
  std::size_t worker_count() const { return epoch_level_.size(); }
  // Whether timed changes remain to be announced, and the time of the next one (infinity when none).
  bool changes_pending() const { return next_change_s_ < std::numeric_limits<double>::infinity(); }
  Seconds next_change_s() const { return next_change_s_; }

  // One change of a worker's speed profile (install(), apply_initial()) as SimGrid applies it. `time_s` is
  // SimGrid's own date of it (each the previous date plus the gap between the trace's times, a repeat's first
  // after the rest of the period), which may differ in the last digits from the time the actor announces.
  struct SpeedChange {
    Seconds time_s = std::numeric_limits<double>::infinity();       // infinity: no further change
    double scale = 1.0;                                             // the profile's value from time_s on
    bool down = false;                                              // a down keeps the last scale (install())
    Seconds announced_s = std::numeric_limits<double>::infinity();  // when run_actor() reports it
  };
  // Worker k's profile scale in force at t: changes dated at or before t applied, as SimGrid applies them before
  // that instant's actors run. Moves k's reading to t; O(1) amortised while no read of k asks for an earlier t.
  double speed_scale_at(WorkerId k, Seconds t);
  // The first change after k's reading; pass_speed_change puts its scale in force and reads the following one.
  const SpeedChange& next_speed_change(WorkerId k) const { return speed_readings_[k].next; }
  // Whether worker k's host gets a speed profile (install(), or apply_initial() for a constant level): only a
  // partial level changes a host's speed; a worker that only goes down and up has none.
  bool has_speed_profile(WorkerId k) const;
  void pass_speed_change(WorkerId k);

 private:
  AvailabilityModel() = default;
  void run_actor();
  void set_level(WorkerId k, double epoch_level, double time_level, Seconds now_s);
  // Worker k's reading of its speed profile: the scale in force and the next change.
  struct SpeedReading {
    std::size_t index = 0;   // of `next` in timed_[k]
    std::int64_t cycle = 0;  // of `next`, when the trace repeats
    double scale = 1.0;
    double last_up = 1.0;  // the last scale that was not a down's, in this pass over timed_[k] (install())
    SpeedChange next;
  };
  SpeedChange speed_change(WorkerId k, const SpeedReading& reading, Seconds time_s) const;

  std::vector<simgrid::s4u::Host*> hosts_;
  const run::AvailabilityPlan* plan_ = nullptr;  // outlives the model (run_simulation owns both); not copied:
                                                 // its timed trace can be large, and timed_ holds what is needed
  std::vector<std::vector<double>> pstate_fractions_;
  std::vector<std::vector<traces::TracePoint>> timed_;     // per worker, simulated seconds, first at 0
  Seconds period_s_ = 0.0;                                  // > 0: timed_ repeats with this period
  std::vector<double> epoch_level_;
  std::vector<double> time_level_;
  std::vector<double> pstate_fraction_;  // per worker (pstate_fraction())
  Listener listener_;
  Seconds next_change_s_ = std::numeric_limits<double>::infinity();
  std::vector<SpeedReading> speed_readings_;  // per worker
};

}  // namespace omnilearn::sim
