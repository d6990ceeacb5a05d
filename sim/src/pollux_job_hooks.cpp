#include "pollux_job_hooks.h"

#include <string>

namespace omnilearn::sim {

Status apply_pollux_job_model(const ClusterSimOptions& options, const traces::JobSpec& job,
                              const std::vector<std::string>& kinds, double& total_samples) {
  if (!options.measured_steps && !options.statistical_efficiency) return Status::ok();
  const std::string where = "job '" + job.name + "': ";
  if (options.pollux == nullptr) return Status::invalid_argument(where + "Pollux's job model is not loaded");
  const std::string app = traces::PolluxJobModel::application(job.model);
  if (app.empty() || !options.pollux->has(app)) {
    return Status::invalid_argument(where + "model '" + job.model +
                                    "' is none of Pollux's applications (resnet18, resnet50, bert, deepspeech2, "
                                    "yolov3, ncf): step_model measured and statistical_efficiency need one");
  }
  for (const std::string& kind : kinds) {
    if (kind != "t4") {
      return Status::invalid_argument(where + "Pollux measured its steps on t4; the cluster has '" + kind + "'");
    }
  }
  if (options.measured_steps && job.mode != traces::JobMode::kBsp) {
    return Status::invalid_argument(where + "step_model measured steps BSP jobs only");
  }
  if (options.statistical_efficiency && job.epochs > 0.0) {
    auto need = options.pollux->samples_needed(app, static_cast<double>(job.global_batch), job.epochs);
    if (!need.is_ok()) return Status::invalid_argument(where + need.status().message());
    total_samples = *need;
  }
  return Status::ok();
}

Result<Seconds> pollux_step_s(const traces::PolluxJobModel& model, const traces::JobSpec& job,
                              const std::vector<int>& placement) {
  auto s = model.job_step(traces::PolluxJobModel::application(job.model), placement, job.global_batch);
  if (!s.is_ok()) return s.status();
  return s->seconds * static_cast<double>(job.global_batch) / static_cast<double>(s->batch);
}

nlohmann::ordered_json job_model_json(const ClusterSimOptions& options) {
  nlohmann::ordered_json j;
  j["step_model"] = options.measured_steps ? "measured" : "ring";
  j["statistical_efficiency"] = options.statistical_efficiency ? "on" : "off";
  j["source"] = options.job_model_source;
  return j;
}

}  // namespace omnilearn::sim
