#include "omnilearn/scheduler/round_driver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace omnilearn::scheduler {

RoundDriver::RoundDriver(std::unique_ptr<SchedulingPolicy> policy, ClusterFacts cluster, std::vector<Seconds> arrivals,
                         std::function<JobFacts(std::size_t)> facts_of, std::vector<PackedPairFacts> packed_pairs)
    : policy_(std::move(policy)),
      arrivals_(std::move(arrivals)),
      facts_of_(std::move(facts_of)),
      by_arrival_(arrivals_.size()) {
  round_.cluster = std::move(cluster);
  round_.packed_pairs = std::move(packed_pairs);
  kinds_ = round_.cluster.kinds();
  kind_of_host_ = round_.cluster.kind_of_hosts(kinds_);
  std::iota(by_arrival_.begin(), by_arrival_.end(), std::size_t{0});
  std::stable_sort(by_arrival_.begin(), by_arrival_.end(),
                   [&](std::size_t a, std::size_t b) { return arrivals_[a] < arrivals_[b]; });
}

const std::vector<std::size_t>& RoundDriver::advance(Seconds now_s, const std::function<bool(std::size_t)>& finished,
                                                     const std::function<void(std::size_t)>& arrived) {
  round_.now_s = now_s;
  std::vector<std::size_t> arrivals;
  while (arrived_ < by_arrival_.size() && arrivals_[by_arrival_[arrived_]] <= now_s) {
    arrivals.push_back(by_arrival_[arrived_++]);
    arrived(arrivals.back());
  }
  std::sort(arrivals.begin(), arrivals.end());
  // present_ and round_.jobs side by side, in job order: those finished leave, arrivals join.
  std::vector<std::size_t> present;
  std::vector<JobFacts> facts;
  present.reserve(present_.size() + arrivals.size());
  facts.reserve(present_.size() + arrivals.size());
  std::size_t a = 0;
  const auto join_arrivals_before = [&](std::size_t j) {
    for (; a < arrivals.size() && arrivals[a] < j; ++a) {
      present.push_back(arrivals[a]);
      facts.push_back(facts_of_(arrivals[a]));
    }
  };
  for (std::size_t i = 0; i < present_.size(); ++i) {
    if (finished(present_[i])) continue;
    join_arrivals_before(present_[i]);
    present.push_back(present_[i]);
    facts.push_back(std::move(round_.jobs[i]));
  }
  join_arrivals_before(arrivals_.size());
  present_ = std::move(present);
  round_.jobs = std::move(facts);
  return present_;
}

Result<Allocation> RoundDriver::decide() {
  if (round_.jobs.empty()) return Allocation{};
  return policy_->decide(round_);
}

std::vector<std::pair<std::string, int>> RoundDriver::by_kind(const std::vector<DeviceSlot>& slots) const {
  std::vector<int> counts(kinds_.size(), 0);
  for (const DeviceSlot& s : slots) ++counts[kind_of_host_[s.host]];
  std::vector<std::pair<std::string, int>> out;
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    if (counts[k] > 0) out.emplace_back(kinds_[k], counts[k]);
  }
  return out;
}

Seconds RoundDriver::next_round(Seconds now_s, Seconds round_s, bool idle, Seconds max_time_s) const {
  Seconds next_s = now_s + round_s;
  const Seconds next_arrival_s =
      arrived_ < by_arrival_.size() ? arrivals_[by_arrival_[arrived_]] : std::numeric_limits<double>::infinity();
  if (idle && next_arrival_s > next_s) next_s = round_s * std::ceil(next_arrival_s / round_s);
  return max_time_s > 0.0 ? std::min(next_s, max_time_s) : next_s;
}

}  // namespace omnilearn::scheduler
