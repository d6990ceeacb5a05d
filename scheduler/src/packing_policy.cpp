#include "omnilearn/scheduler/packing_policy.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

bool runs_on(const JobFacts& job, const std::string& kind) {
  auto it = job.throughput_per_worker.find(kind);
  return it != job.throughput_per_worker.end() && it->second > 0.0;
}

class PackingPolicy final : public SchedulingPolicy {
 public:
  PackingPolicy(std::unique_ptr<SchedulingPolicy> base, SchedulerOptions options)
      : base_(std::move(base)), options_(std::move(options)) {}
  std::string_view name() const override { return base_->name(); }
  bool adapts_batches() const override { return base_->adapts_batches(); }

  Result<Allocation> decide(const RoundFacts& facts) override {
    const std::size_t n = facts.jobs.size();
    // Arrival order (stable: ties keep the facts' order).
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return facts.jobs[a].arrival_s < facts.jobs[b].arrival_s; });
    std::vector<std::optional<DeviceSlot>> shared;  // the device a job shares in the facts
    auto unshared = detail::unshare_devices(facts, shared);
    if (!unshared.is_ok()) return unshared.status();
    const RoundFacts& base_facts = *unshared;  // the base policy decides as if the guests held nothing
    auto decided = base_->decide(base_facts);
    if (!decided.is_ok()) return decided.status();
    Allocation out = std::move(decided).value();

    std::map<DeviceSlot, std::size_t> owner;  // device -> the job the base policy gave it to
    for (std::size_t j = 0; j < n; ++j) {
      for (const DeviceSlot& s : out.jobs[j].slots) owner[s] = j;
    }
    std::set<DeviceSlot> packed;
    for (const std::size_t j : order) {
      const JobFacts& job = facts.jobs[j];
      if (!out.jobs[j].slots.empty() || job.min_workers != 1 || job.packing_key.empty()) continue;
      bool free_usable = false;
      for (std::size_t h = 0; h < facts.cluster.hosts.size() && !free_usable; ++h) {
        if (!runs_on(job, facts.cluster.hosts[h].kind)) continue;
        for (int s = 0; s < facts.cluster.hosts[h].slots; ++s) {
          if (!owner.contains(DeviceSlot{h, s})) {
            free_usable = true;
            break;
          }
        }
      }
      if (free_usable) continue;
      std::optional<DeviceSlot> best;
      double best_sum = 1.0;
      bool best_kept = false;
      for (const auto& [slot, holder] : owner) {  // ascending host and slot
        const JobFacts& host = facts.jobs[holder];
        const std::string& kind = facts.cluster.hosts[slot.host].kind;
        if (holder == j || packed.contains(slot) || out.jobs[holder].slots.size() != 1 || host.max_workers != 1 ||
            host.packing_key.empty() || !runs_on(job, kind)) {
          continue;
        }
        const auto f = detail::pair_fractions(facts, kind, job.packing_key, host.packing_key);
        if (!f || f->first + f->second <= 1.0) continue;
        const double sum = f->first + f->second;
        const bool kept = shared[j] && *shared[j] == slot;
        if (best_kept) continue;
        if (kept || sum > best_sum) {
          best = slot;
          best_sum = sum;
          best_kept = kept;
        }
      }
      if (!best) continue;
      packed.insert(*best);
      JobAllocation& a = out.jobs[j];
      a.slots = {*best};
      set_change(job, options_, a);
    }
    // A guest the base policy saw as holding nothing and that is not packed again lost its device: preempted.
    for (std::size_t j = 0; j < n; ++j) {
      if (base_facts.jobs[j].current.size() != facts.jobs[j].current.size())
        set_change(facts.jobs[j], options_, out.jobs[j]);
    }
    return out;
  }

 private:
  std::unique_ptr<SchedulingPolicy> base_;
  SchedulerOptions options_;
};

}  // namespace

std::unique_ptr<SchedulingPolicy> make_packing_policy(std::unique_ptr<SchedulingPolicy> base,
                                                      const SchedulerOptions& options) {
  return std::make_unique<PackingPolicy>(std::move(base), options);
}

}  // namespace omnilearn::scheduler
