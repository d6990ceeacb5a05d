#include "omnilearn/run/run_recorder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "omnilearn/base/format.h"

namespace omnilearn::run {

RunRecorder::RunRecorder(std::unique_ptr<RunWriter> writer, RecorderOptions options)
    : writer_(std::move(writer)), options_(options) {
  if (writer_) {
    writer_->set_plan_rows(options_.plan_rows);
  } else {
    options_.iteration_rows = options_.timeline = false;
  }
}

void RunRecorder::iteration(const IterationRecord& r) {
  compute_s_ += r.compute_s;
  comm_s_ += r.comm_s;
  wait_s_ += r.wait_s;
  ++records_;
  if (r.staleness) {
    staleness_sum_ += static_cast<double>(*r.staleness);
    ++staleness_count_;
    staleness_max_ = std::max(staleness_max_, *r.staleness);
  }
  max_step_ = std::max(max_step_, r.step);
  max_epoch_ = std::max(max_epoch_, r.epoch);
  if (r.epoch >= 0) {
    const auto e = static_cast<std::size_t>(r.epoch);
    if (epoch_start_.size() <= e) epoch_start_.resize(e + 1, -1.0);
    if (epoch_start_[e] < 0.0 || r.start_s < epoch_start_[e]) epoch_start_[e] = r.start_s;
  }
  if (energy_) energy_->iteration(r);
  const Seconds step = r.compute_s + r.comm_s + r.wait_s;
  last_end_s_ = std::max(last_end_s_, r.start_s + step);
  if (r.worker == 0) step_time_sum_ += step, ++steps_of_0_;

  if (options_.iteration_rows) writer_->add(r);
  if (!options_.timeline) return;
  Seconds t = r.start_s;
  writer_->span(r.worker, "compute", t, r.compute_s);
  t += r.compute_s;
  // BSP waits for the slowest worker before communicating; ASP has no wait.
  if (r.wait_s > 0.0) writer_->span(r.worker, "wait", t, r.wait_s);
  if (r.comm_s > 0.0) writer_->span(r.worker, "comm", t + r.wait_s, r.comm_s);
}

void RunRecorder::plan(const controller::Plan& plan, std::int64_t epoch) {
  if (plan.decided) this->plan(plan_record(plan, epoch));
}

void RunRecorder::plan(const PlanRecord& r) {
  ++decisions_;
  if (r.changed) ++changes_;
  if (writer_) writer_->add(r);
  if (options_.timeline) {
    writer_->instant("decision", r.time_s, "{\"step\":" + std::to_string(r.step) + ",\"reason\":\"" + r.reason + "\"}");
  }
}

void RunRecorder::availability(WorkerId worker, double fraction, Seconds time_s) {
  if (energy_) energy_->availability(worker, fraction, time_s);
  if (writer_) writer_->add(AvailabilityRecord{time_s, worker, fraction});
  if (options_.timeline) {
    char args[96];
    std::snprintf(args, sizeof args, "{\"worker\":%u,\"fraction\":%.17g}", worker, fraction);
    writer_->instant("availability", time_s, args);
  }
}

void RunRecorder::evaluation(const EvaluationRecord& r) {
  final_accuracy_ = r.accuracy;
  std::optional<double> joules;
  if (energy_ && energy_->has_figures()) joules = energy_->evaluation(r.time_s);
  if (writer_) writer_->add(r, joules);
  if (options_.timeline) writer_->instant("evaluation", r.time_s, "{\"accuracy\":" + format_g(r.accuracy, 17) + "}");
}

void RunRecorder::set_energy_meter(EnergyMeter meter) {
  energy_.emplace(std::move(meter));
  if (writer_ && energy_->has_figures()) writer_->set_evaluation_joules();
}

void RunRecorder::complete(RunSummary& summary) const {
  const double total = compute_s_ + comm_s_ + wait_s_;
  summary.idle_fraction = total > 0.0 ? wait_s_ / total : 0.0;
  summary.decisions = decisions_;
  summary.batch_changes = changes_;
  if (staleness_count_ > 0) {
    summary.mean_staleness = staleness_sum_ / static_cast<double>(staleness_count_);
    summary.max_staleness = staleness_max_;
  }
  if (final_accuracy_) summary.final_accuracy = final_accuracy_;
  if (energy_) summary.energy = energy_->summary(summary.total_time_s, summary.time_to_target_s, summary.final_accuracy);
}

Status RunRecorder::finish(const RunSummary& summary) {
  if (!writer_) return Status::ok();
  if (summary.energy && summary.energy->reason.empty() && !summary.energy->workers.empty()) {  // measured: host-wide
    OMNI_RETURN_IF_ERROR(
        write_file_atomically((std::filesystem::path(writer_->dir()) / "energy.csv").string(), energy_csv(*summary.energy)));
  }
  return writer_->finish(summary);
}

void RunRecorder::fill_from_records(RunSummary& summary, Seconds origin_s) const {
  summary.iterations = max_step_ + 1;
  summary.epochs = max_epoch_ + 1;
  summary.total_time_s = last_end_s_ - origin_s;
  summary.mean_iteration_s = steps_of_0_ > 0 ? step_time_sum_ / static_cast<double>(steps_of_0_) : 0.0;
  summary.epoch_time_s.clear();
  for (std::size_t e = 0; e < epoch_start_.size(); ++e) {
    const Seconds end = e + 1 < epoch_start_.size() ? epoch_start_[e + 1] : last_end_s_;
    summary.epoch_time_s.push_back(std::max(0.0, end - epoch_start_[e]));
  }
}

}  // namespace omnilearn::run
