#include "pipeline_output.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/emulator/pipeline_prediction.h"
#include "omnilearn/emulator/pipeline_protocol.h"

namespace omnilearn::emulator {
namespace {

std::string path(const std::string& dir, const char* file) { return (std::filesystem::path(dir) / file).string(); }

template <typename T>
std::string joined(const std::vector<T>& v) {
  std::ostringstream out;
  out.precision(9);
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ";" : "") << v[i];
  return out.str();
}

std::string calibration_csv(const PipelineTestbedSpec& spec, const PipelineCalibration& c) {
  std::ostringstream out;
  out.precision(9);
  out << "replica,stage,layers,share,forward_s,backward_s,update_s,send_forward_s,send_backward_s\n";
  for (std::size_t k = 0; k < c.forward_s.size(); ++k) {
    const auto s = static_cast<std::int64_t>(k) % spec.stages;
    const bool sends = s < spec.stages - 1;
    out << static_cast<std::int64_t>(k) / spec.stages << "," << s << "," << spec.layers_per_stage[static_cast<std::size_t>(s)]
        << "," << spec.shares[k] << "," << c.forward_s[k] << "," << c.backward_s[k] << ","
        << (k < c.update_s.size() ? c.update_s[k] : 0.0) << ","
        << (sends ? c.send_forward_s[static_cast<std::size_t>(s)] : 0.0) << ","
        << (sends ? c.send_backward_s[static_cast<std::size_t>(s)] : 0.0) << "\n";
  }
  out << "# allreduce_s " << c.allreduce_s << ", sync_s " << c.sync_s << "\n";
  return out.str();
}

std::string steps_csv(const PipelineTestbedResult& r) {
  std::ostringstream out;
  out.precision(9);
  out << "source,step,step_s,replica_s,micro_batches\n";
  for (const auto* rows : {&r.measured, &r.predicted}) {
    for (const PipelineStepRecord& s : *rows) {
      out << (rows == &r.measured ? "measured" : "predicted") << "," << s.step << "," << s.step_s << ","
          << joined(s.replica_s) << "," << joined(s.micro_batches) << "\n";
    }
  }
  return out.str();
}

std::string stages_csv(const PipelineTestbedResult& r) {
  std::ostringstream out;
  out.precision(9);
  out << "step,replica,stage,compute_s,wait_s\n";
  for (const StageStepRecord& s : r.stage_steps) {
    out << s.step << "," << s.replica << "," << s.stage << "," << s.compute_s << "," << s.wait_s << "\n";
  }
  return out.str();
}

std::string validation_json(const PipelineTestbedSpec& spec, const PipelineComparison& c) {
  const PipelineBars bars;
  const PipelineVerdict v = judge_pipeline(c, bars);
  const nlohmann::json j = {
      {"name", spec.name},
      {"steps_compared", spec.steps},
      {"measured_mean_step_s", c.measured_mean_s},
      {"predicted_mean_step_s", c.predicted_mean_s},
      {"mean_step_error", c.mean_error},
      {"mean_step_bar", bars.mean_error},
      {"mean_step_within_bar", v.mean_ok},
      {"window_steps", c.window},
      {"worst_window_error", c.worst_window_error},
      {"worst_window_first_step", c.worst_window_first_step},
      {"worst_window_bar", bars.window_error},
      {"worst_window_within_bar", v.window_ok},
      {"measured_micro_batches_per_replica", c.measured_micro_batches},
      {"predicted_micro_batches_per_replica", c.predicted_micro_batches},
      {"split_bar_micro_batches", bars.split_micro_batches},
      {"split_within_bar", v.split_ok},
      {"all_within_bars", v.all()}};
  return j.dump(2) + "\n";
}

// The stages' parts (pipeline_timeline_part) joined under one header, the parts removed.
Status join_timeline(const PipelineTestbedSpec& spec, const std::string& out_dir) {
  std::ostringstream out;
  out << "rank,step,event,micro_batch,begin_s,end_s,cpu_s\n";
  bool any = false;
  for (std::int64_t k = 0; k < spec.stages * spec.replicas; ++k) {
    const std::string part = pipeline_timeline_part(out_dir, k);
    std::ifstream in(part);
    if (!in) continue;
    out << in.rdbuf();
    any = true;
    in.close();
    std::error_code ec;
    std::filesystem::remove(part, ec);
  }
  return any ? write_file_atomically(path(out_dir, "timeline.csv"), out.str()) : Status::ok();
}

// One steps.csv row: source,step,step_s,replica_s (;-joined),micro_batches (;-joined).
template <typename T>
bool split_list(const std::string& field, std::vector<T>& into) {
  std::istringstream in(field);
  for (std::string item; std::getline(in, item, ';');) {
    std::istringstream v(item);
    T x{};
    if (!(v >> x)) return false;
    into.push_back(x);
  }
  return true;
}

Status read_steps_csv(const std::string& file, std::vector<PipelineStepRecord>& measured,
                      std::vector<PipelineStepRecord>& predicted) {
  std::ifstream in(file);
  if (!in) return Status::not_found(file + ": cannot read");
  std::string line;
  std::getline(in, line);
  for (int n = 2; std::getline(in, line); ++n) {
    std::vector<std::string> f;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) f.push_back(cell);
    PipelineStepRecord r;
    bool ok = f.size() == 5 && (f[0] == "measured" || f[0] == "predicted");
    try {
      if (ok) r.step = std::stoll(f[1]), r.step_s = std::stod(f[2]);
    } catch (const std::exception&) {
      ok = false;
    }
    ok = ok && split_list(f[3], r.replica_s) && split_list(f[4], r.micro_batches);
    if (!ok) return Status::parse_error(file + ":" + std::to_string(n) + ": expected source,step,step_s,replica_s,micro_batches");
    (f[0] == "measured" ? measured : predicted).push_back(std::move(r));
  }
  return Status::ok();
}

}  // namespace

Status write_pipeline_validation(const PipelineTestbedSpec& spec, const PipelineComparison& comparison,
                                 const std::string& out_dir) {
  return write_file_atomically(path(out_dir, "validation.json"), validation_json(spec, comparison));
}

Status write_pipeline_outputs(const PipelineTestbedSpec& spec, const PipelineTestbedResult& result,
                              const std::string& out_dir) {
  if (!result.calibration.forward_s.empty()) {
    OMNI_RETURN_IF_ERROR(write_file_atomically(path(out_dir, "calibration.csv"), calibration_csv(spec, result.calibration)));
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(path(out_dir, "steps.csv"), steps_csv(result)));
  OMNI_RETURN_IF_ERROR(write_file_atomically(path(out_dir, "stages.csv"), stages_csv(result)));
  OMNI_RETURN_IF_ERROR(join_timeline(spec, out_dir));
  if (result.outcome != RunOutcome::kCompleted) return Status::ok();
  return write_pipeline_validation(spec, result.comparison, out_dir);
}

Result<PipelineRunCheck> check_pipeline_run(const std::string& run_dir) {
  auto config = read_pipeline_config(path(run_dir, "pipeline.json"));
  if (!config) return config.status();
  std::vector<PipelineStepRecord> measured, predicted;
  OMNI_RETURN_IF_ERROR(read_steps_csv(path(run_dir, "steps.csv"), measured, predicted));
  const PipelineTestbedSpec& spec = config->spec;
  if (static_cast<std::int64_t>(measured.size()) < spec.warmup_steps + spec.steps) {
    return Status::invalid_argument(path(run_dir, "steps.csv") + ": " + std::to_string(measured.size()) +
                                    " measured steps, the run was to have " +
                                    std::to_string(spec.warmup_steps + spec.steps) + " (an unfinished run)");
  }
  PipelineRunCheck check{spec, compare_pipeline(spec, measured, predicted)};
  OMNI_RETURN_IF_ERROR(write_pipeline_validation(spec, check.comparison, run_dir));
  return check;
}

}  // namespace omnilearn::emulator
