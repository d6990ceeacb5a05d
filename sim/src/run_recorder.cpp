#include "run_recorder.h"

#include <ctime>
#include <string>

#include "omnilearn/controller/controller.h"

namespace omnilearn::sim {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Result<std::unique_ptr<RunRecorder>> RunRecorder::open(const scenarios::Scenario& scenario, const SimOptions& options) {
  if (options.output_dir.empty()) return Status::invalid_argument("SimOptions.output_dir: required");
  std::unique_ptr<RunRecorder> r(new RunRecorder());
  r->scenario_ = &scenario;
  r->options_ = &options;
  r->started_ = utc_now();
  r->start_ = std::chrono::steady_clock::now();
  r->rows_ = options.iteration_rows;
  r->timeline_ = options.timeline && scenario.outputs.timeline;
  scenarios::RunFolderOptions folder;
  folder.reuse = options.reuse;
  auto writer = scenarios::RunWriter::open(options.output_dir, manifest_json(scenario, options, r->started_, "null"),
                                           r->timeline_, folder);
  if (!writer) return writer.status();
  r->writer_ = std::move(writer).value();
  return r;
}

void RunRecorder::iteration(const scenarios::IterationRecord& r) {
  compute_s_ += r.compute_s;
  comm_s_ += r.comm_s;
  wait_s_ += r.wait_s;
  ++records_;
  if (r.staleness) {
    staleness_sum_ += static_cast<double>(*r.staleness);
    ++staleness_count_;
    staleness_max_ = std::max(staleness_max_, *r.staleness);
  }
  if (rows_) writer_->add(r);
  if (!timeline_) return;
  Seconds t = r.start_s;
  writer_->span(r.worker, "compute", t, r.compute_s);
  t += r.compute_s;
  // BSP waits for the slowest worker before communicating; ASP has no wait.
  if (r.wait_s > 0.0) writer_->span(r.worker, "wait", t, r.wait_s);
  if (r.comm_s > 0.0) writer_->span(r.worker, "comm", t + r.wait_s, r.comm_s);
}

void RunRecorder::plan(const controller::Plan& plan, std::int64_t epoch) {
  if (!plan.decided) return;
  ++decisions_;
  if (plan.changed) ++changes_;
  scenarios::PlanRecord rec;
  rec.step = plan.step;
  rec.epoch = epoch;
  rec.time_s = plan.time_s;
  rec.reason = controller::to_string(plan.reason);
  rec.changed = plan.changed;
  rec.imbalance = plan.imbalance;
  rec.batch = plan.batch;
  rec.weight = plan.weight;
  writer_->add(rec);
  if (timeline_) {
    writer_->instant("decision", plan.time_s,
                     "{\"step\":" + std::to_string(plan.step) + ",\"reason\":\"" + rec.reason + "\"}");
  }
}

void RunRecorder::availability(WorkerId worker, double fraction, Seconds time_s) {
  writer_->add(scenarios::AvailabilityRecord{time_s, worker, fraction});
  if (timeline_) {
    char args[96];
    std::snprintf(args, sizeof args, "{\"worker\":%u,\"fraction\":%.17g}", worker, fraction);
    writer_->instant("availability", time_s, args);
  }
}

Status RunRecorder::finish(scenarios::RunSummary& summary) {
  const double total = compute_s_ + comm_s_ + wait_s_;
  summary.idle_fraction = total > 0.0 ? wait_s_ / total : 0.0;
  summary.decisions = decisions_;
  summary.batch_changes = changes_;
  if (staleness_count_ > 0) {
    summary.mean_staleness = staleness_sum_ / static_cast<double>(staleness_count_);
    summary.max_staleness = staleness_max_;
  }
  OMNI_RETURN_IF_ERROR(writer_->finish(summary));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return writer_->rewrite_manifest(manifest_json(*scenario_, *options_, started_, std::to_string(elapsed)));
}

Status RunRecorder::close() { return writer_->close(); }

}  // namespace omnilearn::sim
