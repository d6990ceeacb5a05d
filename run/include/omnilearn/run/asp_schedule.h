// AspSchedule: when the ASP parameter server answers a push (workload.asp): at once, or later, when SSP's staleness
// bound or the epoch barrier of `pull: per-epoch` lets the worker go on. The one implementation of these scheduling
// rules for the simulator's ASP driver and the testbed's parameter server; it reads no clock. Not thread-safe: the
// server's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::run {

// The staleness of ASP pushes (docs/asp-rules.md): tau of worker k's push is the updates the server applied since k
// last pulled, less k's own updates applied since then (its copy holds them: not stale to it). The one count of the
// simulator's ASP server, the multi-job simulator's ASP jobs and the testbed's parameter server.
class AspStaleness {
 public:
  explicit AspStaleness(std::size_t workers) : pulled_(workers, 0), own_(workers, 0) {}
  // k took the server's parameters after `updates` updates.
  void pulled(WorkerId k, std::int64_t updates) {
    pulled_[k] = updates;
    own_[k] = 0;
  }
  // k's push was applied as an update (one the rule dropped is not).
  void applied_own(WorkerId k) { ++own_[k]; }
  // tau of k's push arriving when the server has applied `updates`.
  std::int64_t of(WorkerId k, std::int64_t updates) const { return updates - pulled_[k] - own_[k]; }

 private:
  std::vector<std::int64_t> pulled_;
  std::vector<std::int64_t> own_;
};

// The epoch count of pull: per-epoch's barrier (workload.asp.epochs) after `samples` samples (> 0 epoch_samples):
// floor(samples / epoch_samples), or ceil, as the OmniLearn paper's server counts (1 after the run's first push). The
// one count of the simulator's ASP driver and the testbed's parameter server.
inline std::int64_t barrier_epoch(scenarios::AspEpochs rule, std::int64_t samples, std::int64_t epoch_samples) {
  return rule == scenarios::AspEpochs::kCeil ? (samples + epoch_samples - 1) / epoch_samples : samples / epoch_samples;
}

class AspSchedule {
 public:
  // Whether worker j is up now: a down worker holds nobody back.
  using LiveFn = std::function<bool(WorkerId)>;

  AspSchedule(const scenarios::AspSpec& spec, std::size_t workers);

  // Whether a reply may ever wait (rule ssp, or pull: per-epoch). When false, every push is answered at once and
  // the server need not call the rest.
  bool holds() const { return ssp_ || per_epoch_; }

  // Worker k's push of a finished iteration was handled (applied, or dropped by the rule); `epoch_ended`: it
  // crossed an epoch boundary (pull: per-epoch then holds every reply until each live worker has pushed once more).
  // k's reply waits until release() returns it.
  void pushed(WorkerId k, bool epoch_ended);
  // The held replies that may go now, in the order they were held. `barrier_opened` is set when the epoch barrier
  // has just opened: the server makes the epoch's batch decision before it answers them (each with a pull).
  std::vector<WorkerId> release(const LiveFn& live, bool& barrier_opened);
  // Every held reply, in order (the run ended).
  std::vector<WorkerId> release_all();
  // Worker k is back after being down: its count of finished iterations is raised to the slowest live worker's, so
  // that it neither waits for the iterations it lost nor holds the others back.
  void rejoin(WorkerId k, const LiveFn& live);

  bool held(WorkerId k) const { return held_[k]; }
  std::int64_t finished(WorkerId k) const { return finished_[k]; }

 private:
  // SSP: k may start its next iteration (its finished_[k]-th, 0-based) when every live worker has finished its
  // (finished_[k] - s - 1)-th, i.e. finished_[k] - s <= the slowest live worker's count.
  bool ssp_allows(WorkerId k, const LiveFn& live) const;
  std::int64_t slowest_live(const LiveFn& live, WorkerId except) const;

  bool ssp_ = false;
  bool per_epoch_ = false;
  std::int64_t bound_ = 0;
  bool barrier_ = false;               // an epoch ended; not every live worker has pushed since
  std::vector<std::int64_t> finished_;
  std::vector<bool> held_;
  std::vector<WorkerId> order_;        // held workers, in the order they were held
};

}  // namespace omnilearn::run
