#include "pipeline_output.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "omnilearn/base/atomic_file.h"

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
  const nlohmann::json j = {
      {"name", spec.name},
      {"steps_compared", spec.steps},
      {"measured_mean_step_s", c.measured_mean_s},
      {"predicted_mean_step_s", c.predicted_mean_s},
      {"mean_step_error", c.mean_error},
      {"mean_step_bar", kPipelineMeanBar},
      {"mean_step_within_bar", std::abs(c.mean_error) <= kPipelineMeanBar},
      {"window_steps", c.window},
      {"worst_window_error", c.worst_window_error},
      {"worst_window_first_step", c.worst_window_first_step},
      {"worst_window_bar", kPipelineWindowBar},
      {"worst_window_within_bar", std::abs(c.worst_window_error) <= kPipelineWindowBar},
      {"measured_micro_batches_per_replica", c.measured_micro_batches},
      {"predicted_micro_batches_per_replica", c.predicted_micro_batches}};
  return j.dump(2) + "\n";
}

}  // namespace

Status write_pipeline_outputs(const PipelineTestbedSpec& spec, const PipelineTestbedResult& result,
                              const std::string& out_dir) {
  if (!result.calibration.forward_s.empty()) {
    OMNI_RETURN_IF_ERROR(write_file_atomically(path(out_dir, "calibration.csv"), calibration_csv(spec, result.calibration)));
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(path(out_dir, "steps.csv"), steps_csv(result)));
  OMNI_RETURN_IF_ERROR(write_file_atomically(path(out_dir, "stages.csv"), stages_csv(result)));
  if (result.outcome != RunOutcome::kCompleted) return Status::ok();
  return write_file_atomically(path(out_dir, "validation.json"), validation_json(spec, result.comparison));
}

}  // namespace omnilearn::emulator
