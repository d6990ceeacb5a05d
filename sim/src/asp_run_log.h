// AspRunLog: what the ASP server saw, for the run folder: per barrier of pull: per-epoch, which worker's push wrote
// the parameters everyone pulls (the last update applied before the barrier opened: under update: model-overwrite,
// the last writer's model) and its steps (barriers.csv); per run, each worker's share of the applied updates and the
// staleness of the pushes (summary.json), and what the pushes a rule dropped (Ringmaster) cost. Also the paper's
// epoch count for the barrier (workload.asp.epochs: ceil).
// Not thread-safe: the parameter server's actor only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/run/records.h"

namespace omnilearn::sim {

class AspRunLog {
 public:
  // `epoch_samples` (> 0): the samples of one epoch, which ceil_crossed counts in.
  AspRunLog(std::size_t workers, std::int64_t epoch_samples);

  // The OmniLearn paper's server's count, ceil(samples / epoch_samples) after each push: true when `samples` (the
  // run's samples so far, this push's included) raised it. The first push raises it to 1.
  bool ceil_crossed(std::int64_t samples);
  std::int64_t ceil_epoch() const { return ceil_epoch_; }
  // k's push of `batch` samples, `staleness` updates stale, was handled: `applied` (it wrote the parameters), or
  // dropped by the rule.
  void pushed(WorkerId k, BatchSize batch, std::int64_t staleness, bool applied);
  // The cost of k's push: `compute_s` seconds of computing, `joules` of it (nullopt: the run meters no energy), of
  // `batch` samples; `applied` as in pushed(). Feeds fill_dropped.
  void push_cost(WorkerId k, BatchSize batch, Seconds compute_s, std::optional<double> joules, bool applied);
  // k took the server's parameters.
  void pulled(WorkerId k) { since_pull_[k] = 0; }
  // The barrier opened at `time_s`, the server at `update` updates, in data epoch `epoch` (0-based, as
  // iterations.csv's): a row for its last writer.
  void barrier(std::int64_t epoch, std::int64_t update, Seconds time_s);

  bool has_barriers() const { return !rows_.empty(); }
  // barriers.csv: barrier,epoch,update,time_s,writer,writer_steps,writer_steps_since_pull,writer_batch (writer
  // empty when no update had been applied).
  std::string barriers_csv() const;
  // summary.json's extra: asp_update_share_w<k> (k's applied updates over all applied), asp_staleness_{median,p90}
  // over every push the server handled (the summary's mean_staleness and max_staleness are its mean and max).
  void fill(run::RunSummary& summary) const;
  // summary.json's extra for a rule that drops pushes: dropped_push_fraction (dropped over all pushes the server
  // handled), dropped_samples (their samples), dropped_compute_s (the compute seconds spent on them, summed over the
  // workers) and dropped_compute_fraction (over all pushes' compute seconds), dropped_energy_j and
  // dropped_energy_fraction (with energy metered: their compute joules, over all pushes' compute joules), and per
  // worker asp_dropped_fraction_w<k> (k's pushes dropped over k's pushes).
  void fill_dropped(run::RunSummary& summary) const;

 private:
  struct Row {
    std::int64_t barrier, epoch, update;
    Seconds time_s;
    std::int64_t writer, steps, since_pull;
    BatchSize batch;
  };
  std::int64_t staleness_quantile(double q) const;

  std::int64_t epoch_samples_;
  std::int64_t ceil_epoch_ = 0;
  std::vector<std::int64_t> applied_;     // each worker's applied updates
  std::vector<std::int64_t> since_pull_;  // each worker's applied updates since its last pull
  std::int64_t writer_ = -1;              // the last applied push's worker
  BatchSize writer_batch_ = 0;
  std::map<std::int64_t, std::int64_t> staleness_;  // staleness -> pushes
  std::int64_t pushes_ = 0;
  std::vector<Row> rows_;
  struct PushCost {
    std::int64_t pushes = 0, dropped = 0, dropped_samples = 0;
    Seconds compute_s = 0.0, dropped_compute_s = 0.0;
    double joules = 0.0, dropped_joules = 0.0;
  };
  std::vector<PushCost> cost_;  // per worker
  bool metered_ = false;        // push_cost was given joules
};

}  // namespace omnilearn::sim
