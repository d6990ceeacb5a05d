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

ContentionProfile::ContentionProfile(const std::vector<JobOutcome>& jobs, Seconds stop_s) : stop_s_(stop_s) {
  std::vector<std::pair<Seconds, double>> events;  // (time, +1 arrival / -1 end)
  events.reserve(2 * jobs.size());
  for (const JobOutcome& o : jobs) {
    if (!(until(o) > o.arrival_s)) continue;  // present for no time
    events.emplace_back(o.arrival_s, 1.0);
    events.emplace_back(until(o), -1.0);
  }
  std::sort(events.begin(), events.end());
  double present = 0.0;
  for (const auto& [t, delta] : events) {
    if (times_.empty() || t > times_.back()) {
      before_.push_back(times_.empty() ? 0.0 : before_.back() + present * (t - times_.back()));
      times_.push_back(t);
      present_.push_back(present);
    }
    present += delta;
    present_.back() = present;
  }
}

double ContentionProfile::integral(Seconds t) const {
  if (times_.empty() || t <= times_.front()) return 0.0;
  const auto i = static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), t) - times_.begin()) - 1;
  return before_[i] + present_[i] * (t - times_[i]);
}

double ContentionProfile::average(const JobOutcome& job) const {
  const Seconds from = job.arrival_s;
  const Seconds to = until(job);
  if (!(to > from)) return 1.0;
  return (integral(to) - integral(from)) / (to - from);
}

void add_finish_time_fairness(ClusterSummary& summary, const std::vector<FairShareJob>& jobs,
                              const std::vector<FairShareKind>& kinds, Seconds stop_s) {
  double sum = 0.0;
  std::size_t finished = 0;
  summary.mean_rho = 0.0;
  summary.max_rho = 0.0;
  const ContentionProfile profile(summary.jobs, stop_s);
  for (std::size_t j = 0; j < summary.jobs.size(); ++j) {
    JobOutcome& o = summary.jobs[j];
    if (!o.finished()) continue;
    o.contention = profile.average(o);
    o.fair_s = fair_share_time(jobs[j], kinds, o.contention);
    sum += o.rho();
    summary.max_rho = std::max(summary.max_rho, o.rho());
    ++finished;
  }
  if (finished > 0) summary.mean_rho = sum / static_cast<double>(finished);
}

}  // namespace omnilearn::sim
