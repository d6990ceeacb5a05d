#include "collective_step.h"

#include <algorithm>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>

#include "collective_runner.h"

namespace omnilearn::sim {

double model_gradient_bytes(const scenarios::ModelProfile& model) {
  return model.gradient_bytes > 0.0 ? model.gradient_bytes : 4.0 * model.parameters;
}

bool uses_collective_step(const scenarios::Scenario& scenario) {
  const scenarios::AllreduceSpec& a = scenario.workload.allreduce;
  return scenario.cluster.topology != scenarios::Topology::kStar ||
         a.algorithm != scenarios::AllreduceAlgorithm::kRing ||
         bucket_count(a, model_gradient_bytes(scenario.workload.model)) > 1;
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
  if (!uses_collective_step(scenario)) {
    return scenario.worker_count() > flow_allreduce_max_workers ? "ring-max-min-analytic" : "ring-flow-level";
  }
  if (uniform_star(scenario.cluster)) return "analytic";
  using A = scenarios::AllreduceAlgorithm;
  const A a = scenario.workload.allreduce.algorithm;
  const bool one_flow_each = a == A::kRing || a == A::kHierarchicalRing || a == A::kHalvingDoubling;
  return scenario.cluster.topology == scenarios::Topology::kStar && one_flow_each ? "max-min-analytic" : "flow-level";
}

CollectiveStep::CollectiveStep(const scenarios::Scenario& scenario, const SimPlatform& platform, double gradient_bytes)
    : scenario_(scenario), platform_(platform) {
  active_ = uses_collective_step(scenario);
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

void CollectiveStep::prepare(const std::vector<WorkerId>& participants, Seconds fixed_s) {
  participants_ = participants;
  fixed_s_ = participants.size() > 1 ? fixed_s : 0.0;
  bucket_s_ = -1.0;
  done_ = nullptr;
  const scenarios::AllreduceSpec& spec = scenario_.workload.allreduce;
  if (participants.size() < 2) {
    bucket_s_ = 0.0;
  } else if (auto it = measured_.find(participants); it != measured_.end()) {
    bucket_s_ = it->second;
  } else if (analytic_) {
    const std::int64_t chunks = tree_chunks(spec, participants.size(), bucket_bytes_, alpha_s_, bandwidth_Bps_);
    bucket_s_ = uniform_star_time_s(make_schedule(spec, participants, bucket_bytes_, chunks), participants.size(),
                                    alpha_s_, bandwidth_Bps_);
    measured_[participants] = bucket_s_;
  } else if (auto star = star_time_s(participants)) {
    bucket_s_ = *star;
    measured_[participants] = bucket_s_;
  }
  // Else the flow-level run measures it (run() or run_for_all()).
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
  const Seconds measured = run_schedule(make_schedule(spec, participants_, bucket_bytes_, chunks), hosts);
  measured_[participants_] = measured;
  bucket_s_ = measured;
  ++flow_level_runs_;
}

Seconds CollectiveStep::run(WorkerId k, Seconds step_start_s, Seconds compute_end_s) {
  if (bucket_s_ < 0.0) {
    // The participants wait for the leader's flow-level run; the first to arrive makes their barrier (coordinator
    // mode, run_for_all, needs none).
    if (!done_) done_ = simgrid::s4u::Barrier::create(static_cast<unsigned>(participants_.size()));
    if (k == participants_.front()) measure_flow_level();
    done_->wait();
  }
  const double backward = scenario_.workload.model.backward_fraction;
  return overlapped_end_s(step_start_s, compute_end_s, buckets_, backward, bucket_s_) + fixed_s_;
}

Seconds CollectiveStep::run_for_all(Seconds step_start_s, Seconds compute_end_s) {
  if (bucket_s_ < 0.0) measure_flow_level();
  const double backward = scenario_.workload.model.backward_fraction;
  return overlapped_end_s(step_start_s, compute_end_s, buckets_, backward, bucket_s_) + fixed_s_;
}

}  // namespace omnilearn::sim
