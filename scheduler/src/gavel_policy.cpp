// Gavel's heterogeneity-aware max-min fairness: the LP (max_min_fairness.h) and the round mechanism
// (round_mechanism.h), without or with space sharing (gavel-packed); docs/scheduler.md has the rule.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "omnilearn/scheduler/max_min_fairness.h"
#include "omnilearn/scheduler/round_mechanism.h"
#include "omnilearn/scheduler/scheduling_policies.h"
#include "round_view.h"

namespace omnilearn::scheduler {
namespace {

class GavelPolicy final : public detail::ValidatingPolicy {
 public:
  GavelPolicy(SchedulerOptions options, bool packed)
      : ValidatingPolicy(std::move(options)), packed_(packed), packing_(packed && ValidatingPolicy::options().packing) {}
  std::string_view name() const override { return packed_ ? "gavel-packed" : "gavel"; }
  bool packs_devices() const override { return packed_; }

  Result<Allocation> decide(const RoundFacts& facts) override {
    if (!packing_) return decide_with(facts, facts, {});
    std::vector<std::optional<DeviceSlot>> shared;  // the device a job shares in the facts
    auto unshared = detail::unshare_devices(facts, shared);
    if (!unshared.is_ok()) return unshared.status();
    return decide_with(facts, *unshared, shared);
  }

 private:
  // `own`: the facts with each shared device held by one of its two jobs (= `facts` for gavel); `shared`: the
  // device each job shares in `facts`, if any.
  Result<Allocation> decide_with(const RoundFacts& facts, const RoundFacts& own,
                                 const std::vector<std::optional<DeviceSlot>>& shared) const {
    OMNI_RETURN_IF_ERROR(validate(own));
    const detail::RoundView view(own);
    const std::size_t jobs = own.jobs.size();
    MaxMinProblem problem{view.capacity, std::vector<int>(jobs, 0), view.tput, {}};
    for (std::size_t j = 0; j < jobs; ++j) {
      // Gavel runs a job on one kind per round at a fixed size: the largest in [min, max] that one kind holds.
      int largest = 0;
      for (std::size_t k = 0; k < view.kind_count(); ++k) {
        if (view.tput[j][k] > 0.0) largest = std::max(largest, view.capacity[k]);
      }
      const JobFacts& job = own.jobs[j];
      if (largest < job.min_workers) {
        return Status::invalid_argument("job '" + job.id + "': min_workers " + std::to_string(job.min_workers) +
                                        " fits no single device kind it can run on (the largest has " +
                                        std::to_string(largest) + "); " + std::string(name()) +
                                        " runs a job on one kind per round");
      }
      problem.workers[j] = std::min(job.max_workers, largest);
    }
    if (packing_) problem.pairs = gaining_pairs(own, view, problem.workers);
    auto fractions = solve_max_min_fairness(problem);
    if (!fractions) return fractions.status();
    // What each job has received: its time on each kind (alone, and with packing packed) over its time in the
    // system.
    std::vector<std::vector<double>> received(jobs, std::vector<double>(view.kind_count(), 0.0));
    std::vector<std::vector<double>> packed_received = received;
    for (std::size_t j = 0; j < jobs; ++j) {
      const double present_s = own.now_s - own.jobs[j].arrival_s;
      if (present_s <= 0.0) continue;
      for (std::size_t k = 0; k < view.kind_count(); ++k) {
        auto it = own.jobs[j].service_by_kind.find(view.kinds[k]);
        if (it != own.jobs[j].service_by_kind.end()) received[j][k] = it->second / problem.workers[j] / present_s;
        if (!packing_) continue;
        auto packed = own.jobs[j].packed_service_by_kind.find(view.kinds[k]);
        if (packed == own.jobs[j].packed_service_by_kind.end()) continue;
        packed_received[j][k] = packed->second / present_s;
        received[j][k] = std::max(0.0, received[j][k] - packed_received[j][k]);
      }
    }
    const std::vector<std::size_t> order = detail::arrival_order(own);
    std::vector<std::vector<int>> counts(jobs, std::vector<int>(view.kind_count(), 0));
    if (!packing_) {
      const std::vector<int> kind = assign_round(fractions->x, received, problem.workers, view.capacity);
      for (std::size_t j = 0; j < jobs; ++j) {
        if (kind[j] >= 0) counts[j][static_cast<std::size_t>(kind[j])] = problem.workers[j];
      }
      return detail::place_counts(own, options(), counts, order);
    }
    const PackedRound round = assign_packed_round(*fractions, problem, received, packed_received);
    // A pair's device is placed for one of its jobs, the carrier, and then given to the other too. The carrier is
    // the one holding a device of the pair's kind in `own` (it keeps it), the earlier arrival if both or neither do.
    std::vector<std::size_t> rank(jobs);
    for (std::size_t i = 0; i < jobs; ++i) rank[order[i]] = i;
    std::vector<int> carrier_of(jobs, -1);  // for the other job of a pair: the carrier
    for (std::size_t j = 0; j < jobs; ++j) {
      if (round.kind[j] < 0) continue;
      const auto k = static_cast<std::size_t>(round.kind[j]);
      const int partner = round.partner[j];
      if (partner < 0) {
        counts[j][k] = problem.workers[j];
        continue;
      }
      const auto p = static_cast<std::size_t>(partner);
      if (p < j) continue;  // the pair was handled at its first job
      const auto holds_kind = [&](std::size_t i) { return view.held[i][k] > 0; };
      std::size_t carrier = rank[j] < rank[p] ? j : p;
      if (holds_kind(j) != holds_kind(p)) carrier = holds_kind(j) ? j : p;
      counts[carrier][k] = 1;
      carrier_of[carrier == j ? p : j] = static_cast<int>(carrier);
    }
    Allocation out = detail::place_counts(own, options(), counts, order);
    for (std::size_t j = 0; j < jobs; ++j) {
      if (carrier_of[j] >= 0) out.jobs[j].slots = out.jobs[static_cast<std::size_t>(carrier_of[j])].slots;
    }
    // What changed, from what each job held in the facts (a guest held its shared device there).
    for (std::size_t j = 0; j < jobs; ++j) {
      if (shared[j]) set_change(facts.jobs[j], options(), out.jobs[j]);
      if (carrier_of[j] >= 0) set_change(facts.jobs[j], options(), out.jobs[j]);
    }
    return out;
  }

  // The pairs that may share a device: two jobs of one worker (max_workers 1) with packing keys, on a kind both run
  // on, whose listed fractions there sum to more than 1 (Gavel's criterion: together they do more than either
  // alone). Job pairs in facts order, then kinds in order.
  static std::vector<PackedCombination> gaining_pairs(const RoundFacts& facts, const detail::RoundView& view,
                                                      const std::vector<int>& workers) {
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> listed;
    for (const PackedPairFacts& p : facts.packed_pairs) {
      listed.emplace(std::tuple{p.kind, p.key_a, p.key_b}, std::pair{p.fraction_a, p.fraction_b});
      listed.emplace(std::tuple{p.kind, p.key_b, p.key_a}, std::pair{p.fraction_b, p.fraction_a});
    }
    const auto packable = [&](std::size_t j) {
      return workers[j] == 1 && facts.jobs[j].max_workers == 1 && !facts.jobs[j].packing_key.empty();
    };
    std::vector<PackedCombination> pairs;
    for (std::size_t a = 0; a < facts.jobs.size(); ++a) {
      if (!packable(a)) continue;
      for (std::size_t b = a + 1; b < facts.jobs.size(); ++b) {
        if (!packable(b)) continue;
        for (std::size_t k = 0; k < view.kind_count(); ++k) {
          if (view.tput[a][k] <= 0.0 || view.tput[b][k] <= 0.0) continue;
          auto it = listed.find({view.kinds[k], facts.jobs[a].packing_key, facts.jobs[b].packing_key});
          if (it == listed.end() || it->second.first + it->second.second <= 1.0) continue;
          pairs.push_back({a, b, k, it->second.first, it->second.second});
        }
      }
    }
    return pairs;
  }

  bool packed_;   // gavel-packed
  bool packing_;  // gavel-packed with options.packing: pairs may share devices (else it decides as gavel)
};

}  // namespace

Result<std::unique_ptr<SchedulingPolicy>> make_gavel_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<GavelPolicy>(options, /*packed=*/false));
}

Result<std::unique_ptr<SchedulingPolicy>> make_gavel_packed_policy(const SchedulerOptions& options) {
  OMNI_RETURN_IF_ERROR(validate_scheduler_options(options));
  return std::unique_ptr<SchedulingPolicy>(std::make_unique<GavelPolicy>(options, /*packed=*/true));
}

}  // namespace omnilearn::scheduler
