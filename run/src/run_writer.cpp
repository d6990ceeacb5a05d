#include "omnilearn/run/run_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <locale>
#include <nlohmann/json.hpp>

namespace omnilearn::run {
namespace {

constexpr std::int64_t kFlushEvery = 64;  // iteration rows / timeline events between flushes

// Shortest decimal text that reads back as the same double; locale-independent, so outputs are byte-stable.
std::string num(double v) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("nan");
}
std::string num(std::int64_t v) { return std::to_string(v); }
std::string json_num(double v) { return std::isfinite(v) ? num(v) : std::string("null"); }

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// RFC 4180 quoting, only when needed.
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Status open_file(std::ofstream& out, const std::filesystem::path& path) {
  out.open(path, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out) return Status::io_error(path.string() + ": cannot open for writing");
  out.imbue(std::locale::classic());
  return Status::ok();
}

constexpr const char* kIterationsHeader = "worker,step,epoch,start_s,compute_s,comm_s,wait_s,batch,loss,accuracy,staleness\n";
constexpr const char* kPlansHeader = "step,epoch,time_s,reason,changed,imbalance,worker,batch,weight\n";
constexpr const char* kAvailabilityHeader = "time_s,worker,fraction\n";
constexpr const char* kEvaluationsHeader = "time_s,step,epoch,loss,accuracy\n";
constexpr const char* kEvaluationsEnergyHeader = "time_s,step,epoch,loss,accuracy,joules\n";
constexpr const char* kTimelineOpen = "{\"traceEvents\":[";
constexpr const char* kTimelineClose = "\n],\"displayTimeUnit\":\"ms\"}\n";

}  // namespace

Result<std::unique_ptr<RunWriter>> RunWriter::open(const std::string& dir, const std::string& manifest_json,
                                                   bool timeline, const RunFolderOptions& reuse) {
  auto folder = RunFolder::claim(dir, reuse);
  if (!folder) return folder.status();
  return open(std::move(folder).value(), manifest_json, timeline);
}

Result<std::unique_ptr<RunWriter>> RunWriter::open(std::unique_ptr<RunFolder> folder, const std::string& manifest_json,
                                                   bool timeline) {
  OMNI_CHECK(folder != nullptr, "RunWriter::open needs a claimed RunFolder");
  const std::string dir = folder->dir();
  const std::filesystem::path root(dir);
  std::unique_ptr<RunWriter> w(new RunWriter());
  w->folder_ = std::move(folder);
  w->dir_ = dir;
  OMNI_RETURN_IF_ERROR(write_file_atomically((root / "manifest.json").string(), {manifest_json, "\n"}));
  OMNI_RETURN_IF_ERROR(open_file(w->iterations_, root / "iterations.csv"));
  OMNI_RETURN_IF_ERROR(open_file(w->plans_, root / "plans.csv"));
  OMNI_RETURN_IF_ERROR(open_file(w->availability_, root / "availability.csv"));
  OMNI_RETURN_IF_ERROR(open_file(w->evaluations_, root / "evaluations.csv"));
  w->iterations_ << kIterationsHeader << std::flush;
  w->plans_ << kPlansHeader << std::flush;
  w->availability_ << kAvailabilityHeader << std::flush;
  w->evaluations_ << kEvaluationsHeader << std::flush;
  if (timeline) {
    OMNI_RETURN_IF_ERROR(open_file(w->timeline_, root / "timeline.json"));
    w->timeline_ << kTimelineOpen << std::flush;
  }
  for (auto* f : {&w->iterations_, &w->plans_, &w->availability_, &w->evaluations_}) {
    if (!*f) return Status::io_error(dir + ": cannot write the CSV headers");
  }
  return w;
}

RunWriter::~RunWriter() {
  if (!finished_) close_timeline();  // streams flush and close themselves
}

void RunWriter::note_error(const std::ofstream& out, const char* file) {
  if (!out && first_error_.is_ok()) first_error_ = Status::io_error(dir_ + "/" + file + ": write failed");
}

void RunWriter::add(const IterationRecord& r) {
  if (finished_) return;
  std::string row = num(std::int64_t{r.worker}) + ',' + num(r.step) + ',' + num(r.epoch) + ',' + num(r.start_s) +
                    ',' + num(r.compute_s) + ',' + num(r.comm_s) + ',' + num(r.wait_s) + ',' + num(r.batch) + ',' +
                    (r.loss ? num(*r.loss) : "") + ',' + (r.accuracy ? num(*r.accuracy) : "") + ',' +
                    (r.staleness ? num(*r.staleness) : "") + '\n';
  iterations_ << row;
  // The first row at once: a reader waiting for training to start (omnilearn jobs emulate) sees it.
  if (++iteration_rows_ % kFlushEvery == 0 || iteration_rows_ == 1) iterations_.flush();
  note_error(iterations_, "iterations.csv");
}

void RunWriter::add(const PlanRecord& r) {
  if (finished_) return;
  const std::string prefix = num(r.step) + ',' + num(r.epoch) + ',' + num(r.time_s) + ',' + csv_cell(r.reason) +
                             ',' + (r.changed ? "true" : "false") + ',' + num(r.imbalance) + ',';
  const bool compact = plan_rows_ == PlanRows::kChanges ||
                       (plan_rows_ == PlanRows::kAuto && r.batch.size() > kFullPlanRowsMaxWorkers);
  if (!compact) {
    for (std::size_t k = 0; k < r.batch.size(); ++k) {
      plans_ << prefix << k << ',' << num(r.batch[k]) << ',' << (k < r.weight.size() ? num(r.weight[k]) : "") << '\n';
    }
  } else {
    // When every weight is exactly b_k / sum(b) (the controller's lambda), the marker carries the sum in its batch
    // cell and the rows list batch changes only (weight cells empty): a reader divides, as the controller did.
    std::int64_t sum = 0;
    for (const BatchSize b : r.batch) sum += b;
    bool shares = r.weight.size() == r.batch.size();
    for (std::size_t k = 0; shares && k < r.batch.size(); ++k) {
      const double share = sum > 0 ? static_cast<double>(r.batch[k]) / static_cast<double>(sum) : 0.0;
      shares = r.weight[k] == share;
    }
    // Row by row into the stream: the first plan of a million workers is 100 MB of rows.
    plans_ << prefix << (shares ? ',' + num(sum) + ",\n" : std::string(",,\n"));
    if (last_batch_.size() != r.batch.size()) plans_written_ = false;
    last_batch_.resize(r.batch.size());
    last_weight_.resize(r.batch.size());
    for (std::size_t k = 0; k < r.batch.size(); ++k) {
      // Compared as written text, so that a reader's carried-forward value is exactly the one in the file.
      std::string weight = k < r.weight.size() ? num(r.weight[k]) : "";
      const bool listed = !plans_written_ || last_batch_[k] != r.batch[k] || (!shares && last_weight_[k] != weight);
      if (listed) plans_ << prefix << k << ',' << num(r.batch[k]) << ',' << (shares ? "" : weight) << '\n';
      last_batch_[k] = r.batch[k];
      last_weight_[k] = std::move(weight);
    }
    plans_written_ = true;
  }
  // A decision is rare and precious: flush everything so that a crash keeps the run up to here.
  plans_.flush();
  iterations_.flush();
  availability_.flush();
  if (timeline_.is_open()) timeline_.flush();
  note_error(plans_, "plans.csv");
}

void RunWriter::add(const AvailabilityRecord& r) {
  if (finished_) return;
  // Flushed in batches like iteration rows (a day of per-minute changes on 2,048 workers is 3 million rows); a
  // decision flushes them all.
  availability_ << num(r.time_s) << ',' << r.worker << ',' << num(r.fraction) << '\n';
  if (++availability_rows_ % kFlushEvery == 0) availability_.flush();
  note_error(availability_, "availability.csv");
}

void RunWriter::set_evaluation_joules() {
  OMNI_CHECK(evaluation_rows_ == 0, "RunWriter::set_evaluation_joules after an evaluation row");
  if (finished_ || evaluation_joules_) return;
  evaluation_joules_ = true;
  // Only the header is in the file: the longer one replaces it.
  evaluations_.seekp(0);
  evaluations_ << kEvaluationsEnergyHeader << std::flush;
  note_error(evaluations_, "evaluations.csv");
}

void RunWriter::add(const EvaluationRecord& r, std::optional<double> joules) {
  if (finished_) return;
  ++evaluation_rows_;
  evaluations_ << num(r.time_s) << ',' << num(r.step) << ',' << num(r.epoch) << ',' << num(r.loss) << ','
               << num(r.accuracy);
  if (evaluation_joules_) evaluations_ << ',' << (joules ? num(*joules) : std::string());
  evaluations_ << '\n' << std::flush;
  note_error(evaluations_, "evaluations.csv");
}

void RunWriter::write_event(const std::string& event_json) {
  if (finished_ || !timeline_.is_open()) return;
  timeline_ << (timeline_first_ ? "\n" : ",\n") << event_json;
  timeline_first_ = false;
  if (++timeline_events_ % kFlushEvery == 0) timeline_.flush();
  note_error(timeline_, "timeline.json");
}

void RunWriter::span(WorkerId worker, const char* name, Seconds start_s, Seconds duration_s) {
  if (finished_ || !timeline_.is_open()) return;
  const std::string tid = std::to_string(std::int64_t{worker} + 1);
  if (worker >= named_tracks_.size()) named_tracks_.resize(worker + std::size_t{1}, false);
  if (!named_tracks_[worker]) {
    named_tracks_[worker] = true;
    write_event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" + tid +
                ",\"args\":{\"name\":\"worker " + std::to_string(worker) + "\"}}");
  }
  write_event("{\"name\":" + json_string(name) + ",\"ph\":\"X\",\"pid\":0,\"tid\":" + tid +
              ",\"ts\":" + json_num(start_s * 1e6) + ",\"dur\":" + json_num(duration_s * 1e6) + "}");
}

void RunWriter::instant(const char* name, Seconds time_s, const std::string& args_json) {
  write_event("{\"name\":" + json_string(name) + ",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":" +
              json_num(time_s * 1e6) + ",\"args\":" + (args_json.empty() ? std::string("{}") : args_json) + "}");
}

void RunWriter::close_timeline() {
  if (!timeline_.is_open()) return;
  timeline_ << kTimelineClose;
  timeline_.flush();
  note_error(timeline_, "timeline.json");
  timeline_.close();
}

std::string summary_json(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["policy"] = s.policy;
  j["mode"] = s.mode;
  j["workers"] = s.workers;
  j["iterations"] = s.iterations;
  j["epochs"] = s.epochs;
  j["total_time_s"] = s.total_time_s;
  j["mean_iteration_s"] = s.mean_iteration_s;
  j["idle_fraction"] = s.idle_fraction;
  j["epoch_time_s"] = s.epoch_time_s;
  if (s.mean_staleness) j["mean_staleness"] = *s.mean_staleness;
  if (s.max_staleness) j["max_staleness"] = *s.max_staleness;
  if (s.time_to_target_s) j["time_to_target_s"] = *s.time_to_target_s;
  if (s.final_accuracy) j["final_accuracy"] = *s.final_accuracy;
  j["decisions"] = s.decisions;
  j["batch_changes"] = s.batch_changes;
  j["stop_reason"] = std::string(to_string(s.stop_reason));
  j["extra"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : s.extra) j["extra"][key] = value;  // std::map: sorted, deterministic
  if (s.energy) {
    const EnergySummary& e = *s.energy;
    nlohmann::ordered_json b;
    if (!e.reason.empty()) {
      b["reason"] = e.reason;
    } else if (e.source == "measured" || e.source == "modelled-cputime") {
      // The testbed's host-level figures: no phase split (the CPU time holds compute and communication alike).
      b["joules"] = e.joules;
      b["average_power_w"] = e.average_power_w;
      if (e.source == "modelled-cputime") {
        b["busy_j"] = e.compute_j;
        b["idle_j"] = e.idle_j;
      }
      if (e.modelled_j) b["modelled_j"] = *e.modelled_j;
      if (e.cpu_s) b["cpu_s"] = *e.cpu_s;
      if (e.window_s) b["window_s"] = *e.window_s;
    } else {
      b["joules"] = e.joules;
      b["average_power_w"] = e.average_power_w;
      b["compute_j"] = e.compute_j;
      b["comm_j"] = e.comm_j;
      b["wait_j"] = e.wait_j;
      b["idle_j"] = e.idle_j;
      if (e.links_j) b["links_j"] = *e.links_j;
      b["wait"] = e.wait;
      b["slow_with_slack"] = e.slow_with_slack;
      if (!e.objective.empty()) b["objective"] = e.objective;
      if (!e.slowing_decision.empty()) b["slowing_decision"] = e.slowing_decision;
      if (!e.alpha_band.empty()) {
        nlohmann::ordered_json band = nlohmann::ordered_json::array();
        for (const auto& a : e.alpha_band) band.push_back({{"alpha", a.alpha}, {"joules", a.joules}, {"saving_pct", a.saving_pct}});
        b["alpha_band"] = band;
      }
      if (!e.sources.empty()) {
        nlohmann::ordered_json sources;
        for (const auto& [field, label] : e.sources) sources[field] = label;
        b["sources"] = sources;
      }
      if (e.energy_to_target_j) b["energy_to_target_j"] = *e.energy_to_target_j;
      if (e.joules_per_accuracy_point) b["joules_per_accuracy_point"] = *e.joules_per_accuracy_point;
    }
    if (!e.source.empty()) b["source"] = e.source;  // testbed runs only: the simulator's block is unchanged
    if (!e.note.empty()) b["note"] = e.note;
    j["energy"] = b;
  }
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Status RunWriter::finish(const RunSummary& s) {
  if (finished_) return Status::internal(dir_ + ": RunWriter::finish called twice");
  OMNI_RETURN_IF_ERROR(close_files());
  return write_file_atomically((std::filesystem::path(dir_) / "summary.json").string(), summary_json(s));
}

Status RunWriter::close() {
  if (finished_) return Status::internal(dir_ + ": RunWriter closed twice");
  return close_files();
}

Status RunWriter::close_files() {
  close_timeline();
  finished_ = true;
  for (auto* f : {&iterations_, &plans_, &availability_, &evaluations_}) {
    f->flush();
    f->close();
    note_error(*f, "a CSV file");
  }
  return first_error_;
}

Status RunWriter::write_file(const std::string& name, const std::string& text) {
  const auto& known = run_folder_files();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    return Status::internal(dir_ + ": RunWriter::write_file: " + name + " is not a run-folder file");
  }
  return write_file_atomically((std::filesystem::path(dir_) / name).string(), text);
}

Status RunWriter::rewrite_manifest(const std::string& manifest_json) {
  // The newline apart: a million workers' manifest is 200 MB, which `manifest_json + "\n"` would copy.
  return write_file_atomically((std::filesystem::path(dir_) / "manifest.json").string(), {manifest_json, "\n"});
}

}  // namespace omnilearn::run
