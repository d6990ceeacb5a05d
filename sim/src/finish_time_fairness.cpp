#include "finish_time_fairness.h"

#include <algorithm>
#include <cmath>

#include "collective_model.h"

namespace omnilearn::sim {

std::vector<FairShareKind> fair_share_kinds(const scenarios::DeviceCluster& cluster, double default_bandwidth_Bps,
                                            Seconds default_latency_s) {
  std::map<std::string, FairShareKind> by_kind;
  for (const scenarios::DeviceGroup& g : cluster.groups) {
    const double bandwidth = g.bandwidth_Bps.value_or(default_bandwidth_Bps);
    const Seconds latency = g.latency_s.value_or(default_latency_s);
    auto [it, added] = by_kind.try_emplace(g.device);
    FairShareKind& k = it->second;
    if (added) {
      k.kind = g.device;
      k.bandwidth_Bps = bandwidth;
      k.latency_s = latency;
    }
    k.devices += static_cast<double>(g.nodes * g.gpus_per_node);
    k.largest_node = std::max(k.largest_node, g.gpus_per_node);
    k.bandwidth_Bps = std::min(k.bandwidth_Bps, bandwidth);
    k.latency_s = std::max(k.latency_s, latency);
  }
  std::vector<FairShareKind> kinds;
  for (auto& [name, k] : by_kind) kinds.push_back(std::move(k));
  return kinds;
}

Seconds fair_share_time(const FairShareJob& job, const std::vector<FairShareKind>& kinds, double contention) {
  std::vector<const FairShareKind*> order;
  for (const FairShareKind& k : kinds) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(), [&](const FairShareKind* a, const FairShareKind* b) {
    return job.throughput.at(a->kind) > job.throughput.at(b->kind);
  });
  const auto workers = static_cast<double>(job.workers);
  double left = workers;
  double held = 0.0;           // A
  double balanced_rate = 0.0;  // sum of a_k v_k
  double slowest = 0.0;        // min v_k over the kinds used
  double bandwidth = 0.0;
  Seconds latency = 0.0;
  int used = 0;
  bool one_node = false;
  for (const FairShareKind* k : order) {
    if (left <= 0.0) break;
    const double a = std::min(left, k->devices / contention);
    if (a <= 0.0) continue;
    const double v = job.throughput.at(k->kind);
    left -= a;
    held += a;
    balanced_rate += a * v;
    slowest = used == 0 ? v : std::min(slowest, v);
    bandwidth = used == 0 ? k->bandwidth_Bps : std::min(bandwidth, k->bandwidth_Bps);
    latency = std::max(latency, k->latency_s);
    one_node = used == 0 && k->largest_node >= job.workers;
    ++used;
  }
  const double rate = job.balances_batches ? balanced_rate : held * slowest;
  const double steps = std::ceil(job.total_samples / static_cast<double>(job.global_batch));
  const Seconds compute_s = static_cast<double>(job.global_batch) / rate;
  Seconds allreduce_s = 0.0;
  if (job.workers > 1 && !one_node) {
    allreduce_s = 2.0 * latency + ring_allreduce_bytes(workers, job.gradient_bytes) / bandwidth;
    if (held < workers) allreduce_s *= workers / held;  // time slices: each step's all-reduce is slowed too
  }
  return steps * (compute_s + allreduce_s);
}

double average_contention(const std::vector<JobOutcome>& jobs, std::size_t j, Seconds stop_s) {
  const auto until = [&](const JobOutcome& o) { return o.finished() ? o.end_s : stop_s; };
  const Seconds from = jobs[j].arrival_s;
  const Seconds to = until(jobs[j]);
  if (!(to > from)) return 1.0;
  double together_s = 0.0;
  for (const JobOutcome& o : jobs) together_s += std::max(0.0, std::min(to, until(o)) - std::max(from, o.arrival_s));
  return together_s / (to - from);
}

void add_finish_time_fairness(ClusterSummary& summary, const std::vector<FairShareJob>& jobs,
                              const std::vector<FairShareKind>& kinds, Seconds stop_s) {
  double sum = 0.0;
  std::size_t finished = 0;
  summary.mean_rho = 0.0;
  summary.max_rho = 0.0;
  for (std::size_t j = 0; j < summary.jobs.size(); ++j) {
    JobOutcome& o = summary.jobs[j];
    if (!o.finished()) continue;
    o.contention = average_contention(summary.jobs, j, stop_s);
    o.fair_s = fair_share_time(jobs[j], kinds, o.contention);
    sum += o.rho();
    summary.max_rho = std::max(summary.max_rho, o.rho());
    ++finished;
  }
  if (finished > 0) summary.mean_rho = sum / static_cast<double>(finished);
}

}  // namespace omnilearn::sim
