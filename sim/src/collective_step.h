// CollectiveStep: one BSP run's all-reduce when it is not the star platform's plain ring (another algorithm, another
// topology, or gradient buckets that overlap the backward pass). Each step's bucket all-reduce takes its time from
// the analytic form on a uniform star, else from a flow-level run of the schedule on the platform, remembered per
// participant set (nothing else uses the network during a BSP all-reduce, so the same set takes the same time).
// On a star with unequal links, rings and halving-doubling use max-min sharing of the backbone computed analytically
// (star_max_min_time_s). Not thread-safe: the simulation thread; must not move once the engine runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <simgrid/s4u/Barrier.hpp>
#include <string>
#include <vector>

#include "collective_model.h"
#include "omnilearn/scenarios/scenario.h"
#include "platform_builder.h"

namespace omnilearn::sim {

// The bytes of one gradient (IterationCostModel's rule: the profile's, else 4 per parameter).
double model_gradient_bytes(const scenarios::ModelProfile& model);
// Whether `scenario` needs CollectiveStep: false for the star platform's ring without buckets (BspDriver's own path).
bool uses_collective_step(const scenarios::Scenario& scenario);
// Whether the analytic form is exact for `cluster`: a star whose workers share one bandwidth and latency, and whose
// backbone carries every worker's link at full rate.
bool uniform_star(const scenarios::ClusterSpec& cluster);
// "analytic", "max-min-analytic" or "flow-level" for `scenario` (the path CollectiveStep takes), "ring" paths for the
// driver's own ring.
std::string collective_path(const scenarios::Scenario& scenario, std::size_t flow_allreduce_max_workers);

class CollectiveStep {
 public:
  CollectiveStep(const scenarios::Scenario& scenario, const SimPlatform& platform, double gradient_bytes);

  bool active() const { return active_; }
  // Before a step: its participants (ascending worker ids) and seconds added to every all-reduce (fixed costs).
  void prepare(const std::vector<WorkerId>& participants, Seconds fixed_s);
  // From each participant's actor once everyone has computed (`compute_end_s`, now), the step having started at
  // `step_start_s`: when its all-reduce is over, buckets overlapping the backward pass included. Every participant
  // must call it (the flow-level path synchronises them).
  Seconds run(WorkerId k, Seconds step_start_s, Seconds compute_end_s);
  // The same for every participant at once, from the one actor that drives a step (BspDriver's coordinator mode).
  Seconds run_for_all(Seconds step_start_s, Seconds compute_end_s);
  std::int64_t buckets() const { return buckets_; }
  std::int64_t flow_level_runs() const { return flow_level_runs_; }

 private:
  // The max-min analytic time of a bucket on a star with unequal links, when each rank has one flow out and in.
  std::optional<Seconds> star_time_s(const std::vector<WorkerId>& participants) const;
  // The flow-level run of this step's schedule on the platform (from the calling actor), remembered per set.
  void measure_flow_level();

  const scenarios::Scenario& scenario_;
  const SimPlatform& platform_;
  bool active_ = false;
  bool analytic_ = false;
  std::int64_t buckets_ = 1;
  double bucket_bytes_ = 0.0;
  Seconds alpha_s_ = 0.0;  // uniform star: hop latency
  double bandwidth_Bps_ = 0.0;
  double tcp_gamma_ = 0.0;  // SimGrid's network/TCP-gamma (the window bound of CM02)
  std::vector<WorkerId> participants_;
  Seconds fixed_s_ = 0.0;
  Seconds bucket_s_ = -1.0;                            // this step's, < 0 until known
  std::map<std::vector<WorkerId>, Seconds> measured_;  // bucket time per participant set (either path)
  simgrid::s4u::BarrierPtr done_;  // per-worker actors: they wait here for the leader's flow-level run (made by run())
  std::int64_t flow_level_runs_ = 0;
};

}  // namespace omnilearn::sim
