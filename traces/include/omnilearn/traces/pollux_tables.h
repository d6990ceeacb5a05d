// PolluxJobModel: Pollux's measured job model (Qiao et al., OSDI 2021; its artifact's simulator, applications.py):
// the step time of an application on a placement (GPUs per node) at a local batch, from the steps measured on
// 16 nodes x 4 T4 (traces/devices/pollux-steps.csv), and the statistical efficiency of a global batch, from the
// gradient statistics measured per epoch (traces/devices/pollux-efficiency.csv); both derived by
// scripts/pollux-tables.py. docs/jobs.md ("Pollux's measured job model") has the rules.
// Immutable after read(): thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// One measured (or interpolated) step of a placement at a local batch.
struct PolluxStepTime {
  Seconds step_s = 0.0;  // a whole step: compute and all-reduce
  Seconds sync_s = 0.0;  // the all-reduce's share of it
  bool measured_placement = false;  // the placement itself was measured (else interpolated across node counts)
  bool clamped = false;             // the local batch lay outside the measured ones (the nearest one's time)
};

// A job at a fixed global batch on a placement, as Pollux's simulator runs it: the local batch split into
// accumulation steps of at most the application's largest local batch (a one-GPU job above the smallest validated
// batch accumulates at least once), each step `seconds` long for `batch` samples.
struct PolluxJobStep {
  Seconds seconds = 0.0;
  std::int64_t batch = 0;       // replicas x atomic_bsz x (accum_steps + 1)
  std::int64_t atomic_bsz = 0;  // the local batch of one forward/backward pass
  std::int64_t accum_steps = 0;
  PolluxStepTime measured;      // of one atomic pass with the all-reduce
};

class PolluxJobModel {
 public:
  // Reads the two tables (the shipped ones, or any of the same columns). Errors name the file and line.
  static Result<PolluxJobModel> read(const std::string& steps_csv, const std::string& efficiency_csv);

  // Pollux's application of a job file's model (resnet18: cifar10, resnet50: imagenet, bert, deepspeech2, yolov3,
  // ncf), or "" when the model is none of them.
  static std::string application(const std::string& model);
  bool has(const std::string& app) const { return apps_.count(app) > 0; }
  std::vector<std::string> applications() const;

  // The step time of `app` on `placement` (GPUs on each node, in node order; zeros ignored) at local batch
  // `local_bsz`. A measured placement (up to rotation: 1,3 is 3,1) is interpolated linearly in the local batch;
  // any other (more than 4 nodes) is interpolated linearly in local batch, replicas and nodes between the measured
  // node counts (4 and the scalability table's 6, 8, 12, 16; nodes capped at 16), an approximation of Pollux's
  // Delaunay interpolation over the same points.
  Result<PolluxStepTime> step_time(const std::string& app, const std::vector<int>& placement, double local_bsz) const;
  // A job of `global_batch` on `placement` (Pollux's Job.update_local_bsz with a target batch, then its step).
  Result<PolluxJobStep> job_step(const std::string& app, const std::vector<int>& placement,
                                 std::int64_t global_batch) const;
  // Statistical efficiency of `batch` in epoch `epoch` (0-based): (var + sqr) / (var / s + sqr) / s with
  // s = batch / the smallest validated batch, the gradient statistics interpolated linearly between the validated
  // batches around `batch`. 1 at the smallest validated batch, below 1 above it.
  Result<double> efficiency(const std::string& app, double batch, std::int64_t epoch) const;
  // Samples a job of `batch` trains to finish `epochs` epochs of Pollux's progress: per epoch e, the progress the
  // epoch adds (steps at the smallest batch) x that batch / efficiency(batch, e); a fractional last epoch counts
  // its fraction. Without efficiency (at the smallest batch) this is about epochs x the dataset.
  Result<double> samples_needed(const std::string& app, double batch, double epochs) const;
  // The same from `from_epochs` to `to_epochs` of progress (0 <= from <= to; fractional epochs count their fraction
  // of the epoch they are in): what a job whose batch changes trains at its new batch.
  Result<double> samples_between(const std::string& app, double batch, double from_epochs, double to_epochs) const;
  // The epochs of progress a job reaches from `from_epochs` training `samples` at `batch` (the inverse of
  // samples_between), capped at `max_epochs`.
  Result<double> epochs_after(const std::string& app, double batch, double from_epochs, double samples,
                              double max_epochs) const;
  // The smallest and largest validated global batches.
  std::int64_t init_batch(const std::string& app) const;
  std::int64_t max_batch(const std::string& app) const;
  // The smallest measured local batch (Pollux's min_local_bsz): a job of `batch` on n GPUs needs batch >= n x it.
  double min_local_batch(const std::string& app) const;

 private:
  struct StepRow {
    double local_bsz;
    double step_s;
    double sync_s;
  };
  struct EpochStats {
    double progress;
    double grad_sqr;
    double grad_var;
  };
  struct App {
    std::map<std::string, std::vector<StepRow>> placements;  // by placement as written ("1212"), by local batch
    // (nodes, replicas) -> rows by local batch: placements' means per (nodes, replicas, local batch) and the
    // scalability table's rows.
    std::map<std::pair<int, int>, std::vector<StepRow>> by_size;
    std::map<std::int64_t, std::vector<EpochStats>> validation;  // by global batch, by epoch
    double min_local_bsz = 0.0;
    double max_local_bsz = 0.0;
  };
  explicit PolluxJobModel(std::map<std::string, App> apps) : apps_(std::move(apps)) {}
  Result<const App*> find(const std::string& app) const;
  // Samples a job of `batch` trains in epoch e of Pollux's progress.
  Result<double> epoch_samples(const std::string& app, double batch, std::int64_t e) const;
  Result<std::pair<double, double>> grad_stats(const App& a, const std::string& app, double batch,
                                               std::int64_t epoch) const;

  std::map<std::string, App> apps_;
};

}  // namespace omnilearn::traces
