// CollectiveStep: one BSP run's all-reduce, each step among that step's participants. The star platform's plain ring
// (no buckets) is one flow per participant to its ring successor, each flow's time its own: SimGrid flows, or max-min
// sharing of the backbone computed analytically above SimOptions.flow_allreduce_max_workers participants; then the
// ring's remaining per-hop latencies. Any other all-reduce (another algorithm, another topology, or gradient buckets
// that overlap the backward pass) ends at one time for every participant: each bucket all-reduce takes its time from
// the analytic form on a uniform star, from max-min sharing of a star's backbone computed analytically
// (star_max_min_time_s) for rings and halving-doubling on unequal links, else from a flow-level run of the schedule on
// the platform, remembered per participant set (nothing else uses the network during a BSP all-reduce, so the same
// set takes the same time). Not thread-safe: the simulation thread; must not move once the engine runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <simgrid/s4u/Barrier.hpp>
#include <string>
#include <vector>

#include "collective_model.h"
#include "omnilearn/run/records.h"
#include "omnilearn/scenarios/scenario.h"
#include "platform_builder.h"
#include "platform_energy.h"

namespace omnilearn::sim {

// The bytes of one gradient (IterationCostModel's rule: the profile's, else 4 per parameter).
double model_gradient_bytes(const scenarios::ModelProfile& model);
// Whether `scenario`'s all-reduce is the star platform's plain ring: the ring algorithm, no buckets.
bool star_ring(const scenarios::Scenario& scenario);
// Whether the analytic form is exact for `cluster`: a star whose workers share one bandwidth and latency, and whose
// backbone carries every worker's link at full rate.
bool uniform_star(const scenarios::ClusterSpec& cluster);
// The path CollectiveStep takes for `scenario`: "ring-flow-level" or "ring-max-min-analytic" for the star's plain ring
// (by its worker count), else "analytic", "max-min-analytic" or "flow-level".
std::string collective_path(const scenarios::Scenario& scenario, std::size_t flow_allreduce_max_workers);

class CollectiveStep {
 public:
  // `flow_max_workers`: SimOptions.flow_allreduce_max_workers.
  CollectiveStep(const scenarios::Scenario& scenario, const SimPlatform& platform, double gradient_bytes,
                 std::size_t flow_max_workers);

  // Before a step: its participants (ascending worker ids) and seconds added to every all-reduce (fixed costs).
  void prepare(std::vector<WorkerId> participants, Seconds fixed_s);
  const std::vector<WorkerId>& participants() const { return participants_; }
  // Participant k lost this step's computation (it went down): it sends nothing, and its all-reduce ends when it
  // starts. Call before run() or run_for_all().
  void lose(WorkerId k) {
    lost_[k] = true;
    lost_list_.push_back(k);
  }
  // From each participant's actor once everyone has computed (`compute_end_s`, now), the step having started at
  // `step_start_s`: when k's all-reduce is over, buckets overlapping the backward pass included. Every participant,
  // lost or not, must call it (the flow-level path synchronises them).
  Seconds run(WorkerId k, Seconds step_start_s, Seconds compute_end_s);
  // The same for every participant at once, from the one actor that drives a step (BspDriver's coordinator mode):
  // the i-th participant's end is the i-th value.
  const std::vector<Seconds>& run_for_all(Seconds step_start_s, Seconds compute_end_s);
  // Each step's all-reduce charges the bytes its flows carry over each link to `links` (platform files whose links
  // have power figures; the flow-level path only, which is the one such platforms take). Call before the first step.
  void set_link_energy(LinkEnergy* links) { link_energy_ = links; }
  // summary.json's fields on the all-reduce (none for the star's plain ring).
  void add_summary(run::RunSummary& summary) const;

 private:
  // The star's plain ring: participant k's flow to its successor, and what follows it.
  struct RingHop {
    WorkerId next = 0;
    Seconds extra_latency_s = 0.0;  // the remaining 2(P-1)-1 hops' latency, and the fixed costs
    Seconds analytic_s = -1.0;      // >= 0: the flow's max-min analytic time and one hop (no SimGrid flow)
  };
  void prepare_ring();
  Seconds run_ring(WorkerId k, Seconds compute_end_s);
  void run_ring_for_all(Seconds compute_end_s);
  // The max-min analytic time of a bucket on a star with unequal links, when each rank has one flow out and in.
  std::optional<Seconds> star_time_s(const std::vector<WorkerId>& participants) const;
  // The flow-level run of this step's schedule on the platform (from the calling actor), remembered per set.
  void measure_flow_level();
  // Charges this step's all-reduce to link_energy_ (once a step, when its schedule is known).
  void charge_links();

  const scenarios::Scenario& scenario_;
  const SimPlatform& platform_;
  bool star_ring_ = false;
  bool analytic_ = false;
  std::size_t flow_max_workers_ = 0;
  double gradient_bytes_ = 0.0;
  std::int64_t buckets_ = 1;
  double bucket_bytes_ = 0.0;
  Seconds alpha_s_ = 0.0;  // uniform star: hop latency
  double bandwidth_Bps_ = 0.0;
  double tcp_gamma_ = 0.0;  // SimGrid's network/TCP-gamma (the window bound of CM02)
  std::vector<WorkerId> participants_;
  std::vector<bool> lost_;           // per worker, this step's (lose())
  std::vector<WorkerId> lost_list_;  // the workers lost_ holds
  std::vector<Seconds> ends_;        // run_for_all's, per participant
  std::vector<RingHop> ring_;        // star ring: per worker, this step's hop
  double ring_bytes_ = 0.0;          // star ring: each participant's flow, 2(P-1)/P of the gradient
  Seconds fixed_s_ = 0.0;
  Seconds bucket_s_ = -1.0;                            // this step's, < 0 until known
  std::map<std::vector<WorkerId>, Seconds> measured_;  // bucket time per participant set (either path)
  simgrid::s4u::BarrierPtr done_;  // per-worker actors: they wait here for the leader's flow-level run (made by run())
  std::int64_t flow_level_runs_ = 0;
  LinkEnergy* link_energy_ = nullptr;
  // Per participant set: the bytes one all-reduce (every bucket) carries over each link, from its schedule's routes.
  std::map<std::vector<WorkerId>, std::vector<std::pair<const simgrid::s4u::Link*, double>>> link_bytes_;
};

}  // namespace omnilearn::sim
