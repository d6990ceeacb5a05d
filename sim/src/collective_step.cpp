#include "collective_step.h"

#include <algorithm>
#include <cstdint>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <utility>
#include <xbt/config.hpp>

#include "collective_runner.h"
#include "ring_allreduce_model.h"

namespace omnilearn::sim {

double model_gradient_bytes(const scenarios::ModelProfile& model) {
  return model.gradient_bytes > 0.0 ? model.gradient_bytes : 4.0 * model.parameters;
}

bool star_ring(const scenarios::Scenario& scenario) {
  const scenarios::AllreduceSpec& a = scenario.workload.allreduce;
  return scenario.cluster.topology == scenarios::Topology::kStar &&
         a.algorithm == scenarios::AllreduceAlgorithm::kRing &&
         bucket_count(a, model_gradient_bytes(scenario.workload.model)) <= 1;
}

bool uniform_star(const scenarios::ClusterSpec& cluster) {
  if (cluster.topology != scenarios::Topology::kStar || cluster.workers.empty()) return false;
  const scenarios::NodeSpec& first = cluster.workers.front();
  for (const scenarios::NodeSpec& w : cluster.workers) {
    if (w.bandwidth_Bps != first.bandwidth_Bps || w.latency_s != first.latency_s) return false;
  }
  return cluster.backbone_bandwidth_Bps >= first.bandwidth_Bps * static_cast<double>(cluster.workers.size());
}

std::string collective_path(const scenarios::Scenario& scenario, std::size_t flow_allreduce_max_workers) {
  if (star_ring(scenario)) {
    return scenario.worker_count() > flow_allreduce_max_workers ? "ring-max-min-analytic" : "ring-flow-level";
  }
  if (uniform_star(scenario.cluster)) return "analytic";
  using A = scenarios::AllreduceAlgorithm;
  const A a = scenario.workload.allreduce.algorithm;
  const bool one_flow_each = a == A::kRing || a == A::kHierarchicalRing || a == A::kHalvingDoubling;
  return scenario.cluster.topology == scenarios::Topology::kStar && one_flow_each ? "max-min-analytic" : "flow-level";
}

CollectiveStep::CollectiveStep(const scenarios::Scenario& scenario, const SimPlatform& platform, double gradient_bytes,
                               std::size_t flow_max_workers)
    : scenario_(scenario),
      platform_(platform),
      star_ring_(star_ring(scenario)),
      flow_max_workers_(flow_max_workers),
      gradient_bytes_(gradient_bytes),
      lost_(platform.worker_count, false) {
  if (star_ring_) ring_.resize(platform.worker_count);
  analytic_ = uniform_star(scenario.cluster);
  buckets_ = bucket_count(scenario.workload.allreduce, gradient_bytes);
  bucket_bytes_ = gradient_bytes / static_cast<double>(buckets_);
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  if (analytic_) {
    const scenarios::NodeSpec& w = scenario.cluster.workers.front();
    alpha_s_ = 2.0 * w.latency_s + scenario.cluster.backbone_latency_s;
    bandwidth_Bps_ = w.bandwidth_Bps;
    // CM02 caps a flow at TCP's window over the round trip: on long, fast links that, not the link, is the rate.
    if (tcp_gamma_ > 0.0 && alpha_s_ > 0.0) bandwidth_Bps_ = std::min(bandwidth_Bps_, tcp_gamma_ / (2.0 * alpha_s_));
  }
}

void CollectiveStep::prepare(std::vector<WorkerId> participants, Seconds fixed_s) {
  for (WorkerId k : lost_list_) lost_[k] = false;
  lost_list_.clear();
  participants_ = std::move(participants);
  fixed_s_ = participants_.size() > 1 ? fixed_s : 0.0;
  bucket_s_ = -1.0;
  done_ = nullptr;
  if (star_ring_) {
    prepare_ring();
    return;
  }
  const scenarios::AllreduceSpec& spec = scenario_.workload.allreduce;
  if (participants_.size() < 2) {
    bucket_s_ = 0.0;
  } else if (auto it = measured_.find(participants_); it != measured_.end()) {
    bucket_s_ = it->second;
  } else if (analytic_) {
    const std::int64_t chunks = tree_chunks(spec, participants_.size(), bucket_bytes_, alpha_s_, bandwidth_Bps_);
    bucket_s_ = uniform_star_time_s(make_schedule(spec, participants_, bucket_bytes_, chunks), participants_.size(),
                                    alpha_s_, bandwidth_Bps_);
    measured_[participants_] = bucket_s_;
  } else if (auto star = star_time_s(participants_)) {
    bucket_s_ = *star;
    measured_[participants_] = bucket_s_;
  }
  // Else the flow-level run measures it (run() or run_for_all()).
}

void CollectiveStep::prepare_ring() {
  const std::size_t p = participants_.size();
  const std::vector<scenarios::NodeSpec>& workers = scenario_.cluster.workers;
  const Seconds backbone_latency_s = scenario_.cluster.backbone_latency_s;
  ring_bytes_ = p > 1 ? 2.0 * static_cast<double>(p - 1) / static_cast<double>(p) * gradient_bytes_ : 0.0;
  auto hop_s = [&](WorkerId k) { return workers[k].latency_s + backbone_latency_s + workers[ring_[k].next].latency_s; };
  for (std::size_t i = 0; i < p; ++i) {
    RingHop& hop = ring_[participants_[i]];
    hop.next = participants_[(i + 1) % p];
    hop.extra_latency_s = p > 1 ? static_cast<double>(2 * (p - 1) - 1) * hop_s(participants_[i]) + fixed_s_ : 0.0;
    hop.analytic_s = -1.0;
  }
  if (p < 2 || p <= flow_max_workers_) return;
  // Too many flows for SimGrid's solver at every step: max-min sharing of the backbone, each flow capped by its links.
  std::vector<double> caps(p);
  for (std::size_t i = 0; i < p; ++i) {
    const WorkerId k = participants_[i];
    caps[i] = std::min(workers[k].bandwidth_Bps, workers[ring_[k].next].bandwidth_Bps);
  }
  const auto times = max_min_flow_times(caps, scenario_.cluster.backbone_bandwidth_Bps, ring_bytes_);
  for (std::size_t i = 0; i < p; ++i) ring_[participants_[i]].analytic_s = times[i] + hop_s(participants_[i]);
}

std::optional<Seconds> CollectiveStep::star_time_s(const std::vector<WorkerId>& participants) const {
  const scenarios::ClusterSpec& cluster = scenario_.cluster;
  if (cluster.topology != scenarios::Topology::kStar) return std::nullopt;
  const scenarios::AllreduceSpec& spec = scenario_.workload.allreduce;
  if (spec.algorithm == scenarios::AllreduceAlgorithm::kDoubleBinaryTree ||
      spec.algorithm == scenarios::AllreduceAlgorithm::kParameterServer) {
    return std::nullopt;  // several flows per rank and phase: they contend on its own link
  }
  std::vector<StarLink> links;
  for (WorkerId w : participants) links.push_back({cluster.workers[w].bandwidth_Bps, cluster.workers[w].latency_s});
  return star_max_min_time_s(make_schedule(spec, participants, bucket_bytes_, 1), links, cluster.backbone_bandwidth_Bps,
                             cluster.backbone_latency_s, tcp_gamma_);
}

void CollectiveStep::measure_flow_level() {
  const scenarios::AllreduceSpec& spec = scenario_.workload.allreduce;
  std::vector<simgrid::s4u::Host*> hosts;
  for (WorkerId w : participants_) hosts.push_back(platform_.workers[w]);
  // Chunks for a tree: the closed form's best for the longest route from the leader and its narrowest link.
  double bandwidth = 0.0;
  Seconds alpha = 0.0;
  if (spec.algorithm == scenarios::AllreduceAlgorithm::kDoubleBinaryTree && spec.chunks <= 0) {
    std::vector<simgrid::s4u::Link*> links;
    for (std::size_t i = 1; i < hosts.size(); ++i) {
      double latency = 0.0;
      links.clear();
      hosts.front()->route_to(hosts[i], links, &latency);
      alpha = std::max(alpha, latency);
      for (const simgrid::s4u::Link* l : links) {
        bandwidth = bandwidth > 0.0 ? std::min(bandwidth, l->get_bandwidth()) : l->get_bandwidth();
      }
    }
  }
  const std::int64_t chunks = tree_chunks(spec, participants_.size(), bucket_bytes_, alpha, bandwidth);
  const CollectiveSchedule schedule = make_schedule(spec, participants_, bucket_bytes_, chunks);
  if (link_energy_ != nullptr) {
    std::map<const simgrid::s4u::Link*, double> bytes;
    std::vector<simgrid::s4u::Link*> route;
    for (const CollectivePhase& phase : schedule.phases) {
      for (const CollectiveFlow& f : phase.flows) {
        double latency = 0.0;
        route.clear();
        hosts[f.src]->route_to(hosts[f.dst], route, &latency);
        for (const simgrid::s4u::Link* l : route) bytes[l] += f.bytes * phase.repeat * static_cast<double>(buckets_);
      }
    }
    // In the order of the links' names, so that the sums are the same from run to run.
    auto& list = link_bytes_[participants_];
    list.assign(bytes.begin(), bytes.end());
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return a.first->get_name() < b.first->get_name(); });
  }
  const Seconds measured = run_schedule(schedule, hosts);
  measured_[participants_] = measured;
  bucket_s_ = measured;
  ++flow_level_runs_;
}

Seconds CollectiveStep::run(WorkerId k, Seconds step_start_s, Seconds compute_end_s) {
  if (star_ring_) return run_ring(k, compute_end_s);
  if (bucket_s_ < 0.0) {
    // The participants wait for the leader's flow-level run; the first to arrive makes their barrier (coordinator
    // mode, run_for_all, needs none).
    if (!done_) done_ = simgrid::s4u::Barrier::create(static_cast<unsigned>(participants_.size()));
    if (k == participants_.front()) measure_flow_level();
    done_->wait();
  }
  if (k == participants_.front()) charge_links();
  if (lost_[k]) return compute_end_s;
  const double backward = scenario_.workload.model.backward_fraction;
  return overlapped_end_s(step_start_s, compute_end_s, buckets_, backward, bucket_s_) + fixed_s_;
}

const std::vector<Seconds>& CollectiveStep::run_for_all(Seconds step_start_s, Seconds compute_end_s) {
  ends_.resize(participants_.size());
  if (star_ring_) {
    run_ring_for_all(compute_end_s);
    return ends_;
  }
  if (bucket_s_ < 0.0) measure_flow_level();
  charge_links();
  const double backward = scenario_.workload.model.backward_fraction;
  const Seconds end = overlapped_end_s(step_start_s, compute_end_s, buckets_, backward, bucket_s_) + fixed_s_;
  for (std::size_t i = 0; i < participants_.size(); ++i) ends_[i] = lost_[participants_[i]] ? compute_end_s : end;
  return ends_;
}

Seconds CollectiveStep::run_ring(WorkerId k, Seconds compute_end_s) {
  const RingHop& hop = ring_[k];
  if (lost_[k] || hop.next == k) return compute_end_s;
  // Analytic sharing: no SimGrid activity at all (blocking calls per actor dominate the cost at thousands of workers).
  if (hop.analytic_s >= 0.0) return compute_end_s + hop.analytic_s + hop.extra_latency_s;
  // The 2(P-1)/P share of the gradient k sends to its successor across reduce-scatter and all-gather, concurrent with
  // everyone else's (links and backbone contend), then the latency of the remaining ring steps.
  simgrid::s4u::Comm::sendto(platform_.workers[k], platform_.workers[hop.next],
                             static_cast<std::uint64_t>(ring_bytes_));
  if (hop.extra_latency_s > 0.0) simgrid::s4u::this_actor::sleep_for(hop.extra_latency_s);
  return simgrid::s4u::Engine::get_clock();
}

void CollectiveStep::run_ring_for_all(Seconds compute_end_s) {
  // The flows (at most flow_max_workers participants) as the worker actors send them, then each one's latency.
  std::vector<std::pair<std::size_t, simgrid::s4u::CommPtr>> flows;
  for (std::size_t i = 0; i < participants_.size(); ++i) {
    const WorkerId k = participants_[i];
    const RingHop& hop = ring_[k];
    if (lost_[k] || hop.next == k) {
      ends_[i] = compute_end_s;
    } else if (hop.analytic_s >= 0.0) {
      ends_[i] = compute_end_s + hop.analytic_s + hop.extra_latency_s;
    } else {
      flows.emplace_back(i, simgrid::s4u::Comm::sendto_async(platform_.workers[k], platform_.workers[hop.next],
                                                             static_cast<std::uint64_t>(ring_bytes_)));
    }
  }
  for (auto& [i, comm] : flows) {
    comm->wait();
    ends_[i] = comm->get_finish_time() + ring_[participants_[i]].extra_latency_s;
  }
}

void CollectiveStep::charge_links() {
  if (link_energy_ == nullptr) return;
  const auto it = link_bytes_.find(participants_);
  if (it == link_bytes_.end()) return;  // fewer than two participants: no flows
  for (const auto& [link, bytes] : it->second) link_energy_->carry(link, bytes);
}

void CollectiveStep::add_summary(run::RunSummary& summary) const {
  if (star_ring_) return;
  summary.extra["allreduce_buckets"] = static_cast<double>(buckets_);
  summary.extra["allreduce_flow_level_runs"] = static_cast<double>(flow_level_runs_);
}

}  // namespace omnilearn::sim
