#include "asp_run_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "omnilearn/run/asp_schedule.h"

namespace omnilearn::sim {

AspRunLog::AspRunLog(std::size_t workers, std::int64_t epoch_samples)
    : epoch_samples_(std::max<std::int64_t>(epoch_samples, 1)), applied_(workers, 0), since_pull_(workers, 0) {}

bool AspRunLog::ceil_crossed(std::int64_t samples) {
  const std::int64_t epoch = run::barrier_epoch(scenarios::AspEpochs::kCeil, samples, epoch_samples_);
  if (epoch <= ceil_epoch_) return false;
  ceil_epoch_ = epoch;
  return true;
}

void AspRunLog::pushed(WorkerId k, BatchSize batch, std::int64_t staleness, bool applied) {
  ++staleness_[staleness];
  ++pushes_;
  if (!applied) return;
  ++applied_[k];
  ++since_pull_[k];
  writer_ = static_cast<std::int64_t>(k);
  writer_batch_ = batch;
}

void AspRunLog::barrier(std::int64_t epoch, std::int64_t update, Seconds time_s) {
  const bool any = writer_ >= 0;
  const auto w = static_cast<std::size_t>(any ? writer_ : 0);
  rows_.push_back(Row{static_cast<std::int64_t>(rows_.size()) + 1, epoch, update, time_s, writer_,
                      any ? applied_[w] : 0, any ? since_pull_[w] : 0, any ? writer_batch_ : 0});
}

std::string AspRunLog::barriers_csv() const {
  std::string out = "barrier,epoch,update,time_s,writer,writer_steps,writer_steps_since_pull,writer_batch\n";
  char line[256];
  for (const Row& r : rows_) {
    if (r.writer < 0) {
      std::snprintf(line, sizeof line, "%lld,%lld,%lld,%.9g,,,,\n", static_cast<long long>(r.barrier),
                    static_cast<long long>(r.epoch), static_cast<long long>(r.update), r.time_s);
    } else {
      std::snprintf(line, sizeof line, "%lld,%lld,%lld,%.9g,%lld,%lld,%lld,%lld\n", static_cast<long long>(r.barrier),
                    static_cast<long long>(r.epoch), static_cast<long long>(r.update), r.time_s,
                    static_cast<long long>(r.writer), static_cast<long long>(r.steps),
                    static_cast<long long>(r.since_pull), static_cast<long long>(r.batch));
    }
    out += line;
  }
  return out;
}

std::int64_t AspRunLog::staleness_quantile(double q) const {
  // The smallest value with at least q of the pushes at or below it.
  const auto rank = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(pushes_)));
  std::int64_t seen = 0;
  for (const auto& [value, count] : staleness_) {
    seen += count;
    if (seen >= std::max<std::int64_t>(rank, 1)) return value;
  }
  return 0;
}

void AspRunLog::fill(run::RunSummary& summary) const {
  std::int64_t total = 0;
  for (const std::int64_t a : applied_) total += a;
  for (std::size_t k = 0; k < applied_.size(); ++k) {
    summary.extra["asp_update_share_w" + std::to_string(k)] =
        total > 0 ? static_cast<double>(applied_[k]) / static_cast<double>(total) : 0.0;
  }
  if (pushes_ == 0) return;
  summary.extra["asp_staleness_median"] = static_cast<double>(staleness_quantile(0.5));
  summary.extra["asp_staleness_p90"] = static_cast<double>(staleness_quantile(0.9));
}

}  // namespace omnilearn::sim
