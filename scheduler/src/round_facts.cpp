#include "omnilearn/scheduler/round_facts.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <unordered_set>

#include "omnilearn/base/format.h"
#include "omnilearn/base/input_limits.h"

namespace omnilearn::scheduler {
namespace {

std::string job_name(const JobFacts& job) { return "job '" + job.id + "'"; }

Status check_kind_map(const JobFacts& job, const std::map<std::string, double>& values, const std::string& field,
                      const std::map<std::string, int>& kinds) {
  for (const auto& [kind, v] : values) {
    if (!kinds.contains(kind)) {
      return Status::invalid_argument(job_name(job) + ": " + field + " names kind '" + kind +
                                      "', which no host of the cluster has");
    }
    if (!std::isfinite(v) || v < 0.0) {
      return Status::invalid_argument(job_name(job) + ": " + field + "['" + kind +
                                      "'] must be a finite number >= 0, got " + format_g(v));
    }
  }
  return Status::ok();
}

Status validate_cluster(const ClusterFacts& cluster) {
  if (cluster.hosts.empty()) return Status::invalid_argument("cluster: no hosts");
  std::set<std::string> names;
  std::size_t slots = 0;
  for (std::size_t h = 0; h < cluster.hosts.size(); ++h) {
    const HostFacts& host = cluster.hosts[h];
    const std::string where = "cluster: host " + std::to_string(h) + " ('" + host.name + "')";
    if (host.name.empty()) return Status::invalid_argument("cluster: host " + std::to_string(h) + ": empty name");
    if (!names.insert(host.name).second) return Status::invalid_argument(where + ": name given twice");
    if (host.kind.empty()) return Status::invalid_argument(where + ": empty kind");
    if (host.slots < 1) {
      return Status::invalid_argument(where + ": slots must be >= 1, got " + std::to_string(host.slots));
    }
    slots += static_cast<std::size_t>(host.slots);
    if (slots > limits::kMaxWorkers) {
      return Status::invalid_argument("cluster: more than " + std::to_string(limits::kMaxWorkers) + " device slots");
    }
  }
  return Status::ok();
}

// The goodput scheduler's fields of a job (JobFacts::goodput_by_workers, batch_by_workers, restarts).
Status check_goodput(const JobFacts& job) {
  const auto name = [&] { return job_name(job); };  // built only for an error
  if (job.restarts < 0) {
    return Status::invalid_argument(name() + ": restarts must be >= 0, got " + std::to_string(job.restarts));
  }
  const std::size_t n = job.goodput_by_workers.size();
  if (n == 0 && job.batch_by_workers.empty()) return Status::ok();
  if (n != static_cast<std::size_t>(job.max_workers) || job.batch_by_workers.size() != n) {
    return Status::invalid_argument(name() + ": goodput_by_workers and batch_by_workers must both hold max_workers (" +
                                    std::to_string(job.max_workers) + ") values, got " + std::to_string(n) + " and " +
                                    std::to_string(job.batch_by_workers.size()));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(job.goodput_by_workers[i]) || job.goodput_by_workers[i] < 0.0 || job.batch_by_workers[i] < 1) {
      return Status::invalid_argument(name() + ": goodput_by_workers[" + std::to_string(i) +
                                      "] must be finite and >= 0 and batch_by_workers[" + std::to_string(i) +
                                      "] >= 1, got " + format_g(job.goodput_by_workers[i]) + " and " +
                                      std::to_string(job.batch_by_workers[i]));
    }
  }
  return Status::ok();
}

// `checked`: the round's cluster as validated (its devices by kind, each host's first slot); `taken`: per slot of the
// cluster, whether a job before this one holds it.
Status validate_job(const JobFacts& job, const RoundFacts& facts, const ValidatedCluster& checked,
                    std::vector<char>& taken) {
  const ClusterFacts& cluster = facts.cluster;
  const std::map<std::string, int>& slots_of_kind = checked.slots_of_kind;
  const auto name = [&] { return job_name(job); };  // built only for an error
  if (!std::isfinite(job.arrival_s) || job.arrival_s > facts.now_s) {
    return Status::invalid_argument(name() + ": arrival_s " + format_g(job.arrival_s) + " is not a time <= now_s " +
                                    format_g(facts.now_s));
  }
  if (job.min_workers < 1) {
    return Status::invalid_argument(name() + ": min_workers must be >= 1, got " + std::to_string(job.min_workers));
  }
  if (job.max_workers < job.min_workers) {
    return Status::invalid_argument(name() + ": max_workers " + std::to_string(job.max_workers) +
                                    " is less than min_workers " + std::to_string(job.min_workers));
  }
  const auto total_slots = static_cast<int>(checked.first_slot.back());
  if (job.max_workers > total_slots) {
    return Status::invalid_argument(name() + ": max_workers " + std::to_string(job.max_workers) +
                                    " is more than the cluster's " + std::to_string(total_slots) +
                                    " device slots");
  }
  if (!std::isfinite(job.remaining_samples) || job.remaining_samples < 0.0) {
    return Status::invalid_argument(name() + ": remaining_samples must be a finite number >= 0, got " +
                                    format_g(job.remaining_samples));
  }
  if (!std::isfinite(job.waiting_s) || job.waiting_s < 0.0) {
    return Status::invalid_argument(name() + ": waiting_s must be a finite number >= 0, got " + format_g(job.waiting_s));
  }
  OMNI_RETURN_IF_ERROR(check_goodput(job));
  OMNI_RETURN_IF_ERROR(check_kind_map(job, job.throughput_per_worker, "throughput_per_worker", slots_of_kind));
  OMNI_RETURN_IF_ERROR(check_kind_map(job, job.service_by_kind, "service_by_kind", slots_of_kind));
  OMNI_RETURN_IF_ERROR(check_kind_map(job, job.packed_service_by_kind, "packed_service_by_kind", slots_of_kind));
  int usable = 0;
  for (const auto& [kind, slots] : slots_of_kind) {
    auto it = job.throughput_per_worker.find(kind);
    if (it != job.throughput_per_worker.end() && it->second > 0.0) usable += slots;
  }
  if (usable == 0) return Status::invalid_argument(name() + ": throughput_per_worker is 0 on every kind of the cluster");
  if (job.min_workers > usable) {
    return Status::invalid_argument(name() + ": min_workers " + std::to_string(job.min_workers) + " is more than the " +
                                    std::to_string(usable) + " device slots of the kinds it can run on");
  }
  if (!job.current.empty()) {
    const int held = static_cast<int>(job.current.size());
    if (held < job.min_workers || held > job.max_workers) {
      return Status::invalid_argument(name() + ": current holds " + std::to_string(held) +
                                      " slots, outside [min_workers, max_workers] = [" +
                                      std::to_string(job.min_workers) + ", " + std::to_string(job.max_workers) + "]");
    }
  }
  for (const DeviceSlot& s : job.current) {
    const auto slot = [&] { return "slot " + std::to_string(s.slot) + " of host " + std::to_string(s.host); };
    if (s.host >= cluster.hosts.size() || s.slot < 0 || s.slot >= cluster.hosts[s.host].slots) {
      return Status::invalid_argument(name() + ": current names " + slot() + ", which the cluster does not have");
    }
    auto it = job.throughput_per_worker.find(cluster.hosts[s.host].kind);
    if (it == job.throughput_per_worker.end() || it->second <= 0.0) {
      return Status::invalid_argument(name() + ": current names " + slot() + ", of kind '" + cluster.hosts[s.host].kind +
                                      "', which its throughput_per_worker does not run on");
    }
    char& held = taken[checked.first_slot[s.host] + static_cast<std::size_t>(s.slot)];
    if (held != 0) {
      return Status::invalid_argument(name() + ": current names " + slot() + ", which another job (or this one) holds");
    }
    held = 1;
  }
  return Status::ok();
}

}  // namespace

std::vector<std::string> ClusterFacts::kinds() const {
  // Hosts of one kind usually follow each other: a host of the previous host's kind adds nothing.
  std::vector<std::string> k;
  const std::string* previous = nullptr;
  for (const HostFacts& h : hosts) {
    if (previous != nullptr && h.kind == *previous) continue;
    previous = &h.kind;
    if (std::find(k.begin(), k.end(), h.kind) == k.end()) k.push_back(h.kind);
  }
  std::sort(k.begin(), k.end());
  return k;
}

std::vector<std::size_t> ClusterFacts::kind_of_hosts(const std::vector<std::string>& kinds) const {
  std::vector<std::size_t> out;
  out.reserve(hosts.size());
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    if (h > 0 && hosts[h].kind == hosts[h - 1].kind) {
      out.push_back(out.back());
    } else {
      out.push_back(static_cast<std::size_t>(std::lower_bound(kinds.begin(), kinds.end(), hosts[h].kind) -
                                             kinds.begin()));
    }
  }
  return out;
}

std::vector<int> ClusterFacts::capacity_by_kind() const {
  const std::vector<std::string> k = kinds();
  const std::vector<std::size_t> kind_of = kind_of_hosts(k);
  std::vector<int> capacity(k.size(), 0);
  for (std::size_t h = 0; h < hosts.size(); ++h) capacity[kind_of[h]] += hosts[h].slots;
  return capacity;
}

int ClusterFacts::total_slots() const {
  int n = 0;
  for (const HostFacts& h : hosts) n += h.slots;
  return n;
}

JobFacts fixed_job_facts(std::string id, Seconds arrival_s, int min_workers, int max_workers,
                         std::map<std::string, double> throughput_per_worker, bool balances_batches) {
  JobFacts f;
  f.id = std::move(id);
  f.arrival_s = arrival_s;
  f.min_workers = min_workers;
  f.max_workers = max_workers;
  f.throughput_per_worker = std::move(throughput_per_worker);
  f.balances_batches = balances_batches;
  return f;
}

double JobFacts::attained_service() const {
  double s = 0.0;
  for (const auto& [kind, v] : service_by_kind) s += v;
  return s;
}

Status validate_round_facts(const RoundFacts& facts) {
  ValidatedCluster none;
  return validate_round_facts(facts, none);
}

Status validate_round_facts(const RoundFacts& facts, ValidatedCluster& last) {
  if (!std::isfinite(facts.now_s))
    return Status::invalid_argument("now_s must be finite, got " + format_g(facts.now_s));
  if (!last.valid || last.hosts != facts.cluster.hosts) {
    last.valid = false;
    OMNI_RETURN_IF_ERROR(validate_cluster(facts.cluster));
    last.hosts = facts.cluster.hosts;
    last.slots_of_kind.clear();
    last.first_slot.assign(1, 0);
    for (const HostFacts& h : facts.cluster.hosts) {
      last.slots_of_kind[h.kind] += h.slots;
      last.first_slot.push_back(last.first_slot.back() + static_cast<std::size_t>(h.slots));
    }
    last.valid = true;
  }
  std::unordered_set<std::string_view> ids;
  ids.reserve(facts.jobs.size());
  std::vector<char> taken(last.first_slot.back(), 0);
  for (std::size_t j = 0; j < facts.jobs.size(); ++j) {
    const JobFacts& job = facts.jobs[j];
    if (job.id.empty()) return Status::invalid_argument("job " + std::to_string(j) + ": empty id");
    if (!ids.insert(job.id).second) return Status::invalid_argument("job '" + job.id + "': id given twice");
    OMNI_RETURN_IF_ERROR(validate_job(job, facts, last, taken));
  }
  return Status::ok();
}

std::vector<int> count_by_kind(const ClusterFacts& cluster, const std::vector<DeviceSlot>& slots) {
  const std::vector<std::string> kinds = cluster.kinds();
  std::vector<int> counts(kinds.size(), 0);
  for (const DeviceSlot& s : slots) {
    const std::string& kind = cluster.hosts.at(s.host).kind;
    ++counts[static_cast<std::size_t>(std::lower_bound(kinds.begin(), kinds.end(), kind) - kinds.begin())];
  }
  return counts;
}

double effective_throughput(std::span<const double> per_worker, std::span<const int> counts, bool balances_batches) {
  int n = 0;
  double sum = 0.0;
  double slowest = 0.0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0) continue;
    if (per_worker[k] <= 0.0) return 0.0;
    slowest = n == 0 ? per_worker[k] : std::min(slowest, per_worker[k]);
    n += counts[k];
    sum += counts[k] * per_worker[k];
  }
  return balances_batches ? sum : n * slowest;
}

double effective_throughput(const JobFacts& job, const ClusterFacts& cluster, const std::vector<DeviceSlot>& slots) {
  const std::vector<std::string> kinds = cluster.kinds();
  std::vector<double> per_worker(kinds.size(), 0.0);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    auto it = job.throughput_per_worker.find(kinds[k]);
    if (it != job.throughput_per_worker.end()) per_worker[k] = it->second;
  }
  return effective_throughput(per_worker, count_by_kind(cluster, slots), job.balances_batches);
}

}  // namespace omnilearn::scheduler
