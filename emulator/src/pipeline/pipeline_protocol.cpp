#include "omnilearn/emulator/pipeline_protocol.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "omnilearn/base/atomic_file.h"

namespace omnilearn::emulator {
namespace {

using nlohmann::json;

json to_json(const PipelineTestbedSpec& s) {
  return {{"name", s.name}, {"stages", s.stages}, {"replicas", s.replicas}, {"widths", s.widths},
          {"layers_per_stage", s.layers_per_stage}, {"shares", s.shares}, {"micro_batch_size", s.micro_batch_size},
          {"micro_batches", s.micro_batches}, {"schedule", hybrid::schedule_name(s.schedule.kind)},
          {"steps", s.steps}, {"warmup_steps", s.warmup_steps}, {"window", s.window}, {"seed", s.seed},
          {"learning_rate", s.learning_rate}, {"cpu_period_s", s.cpu_period_s},
          {"calibration_reps", s.calibration_reps}, {"stall_timeout_s", s.stall_timeout_s},
          {"controller", {{"policy", s.controller.policy}, {"every_n", s.controller.every_n},
                          {"dead_band", s.controller.dead_band}, {"ewma_alpha", s.controller.ewma_alpha}}}};
}

Result<PipelineTestbedSpec> spec_from_json(const json& j) {
  PipelineTestbedSpec s;
  j.at("name").get_to(s.name);
  j.at("stages").get_to(s.stages);
  j.at("replicas").get_to(s.replicas);
  j.at("widths").get_to(s.widths);
  j.at("layers_per_stage").get_to(s.layers_per_stage);
  j.at("shares").get_to(s.shares);
  j.at("micro_batch_size").get_to(s.micro_batch_size);
  j.at("micro_batches").get_to(s.micro_batches);
  auto kind = hybrid::parse_schedule_kind(j.at("schedule").get<std::string>());
  if (!kind) return kind.status();
  s.schedule.kind = *kind;
  j.at("steps").get_to(s.steps);
  j.at("warmup_steps").get_to(s.warmup_steps);
  j.at("window").get_to(s.window);
  j.at("seed").get_to(s.seed);
  j.at("learning_rate").get_to(s.learning_rate);
  j.at("cpu_period_s").get_to(s.cpu_period_s);
  j.at("calibration_reps").get_to(s.calibration_reps);
  j.at("stall_timeout_s").get_to(s.stall_timeout_s);
  const json& c = j.at("controller");
  c.at("policy").get_to(s.controller.policy);
  c.at("every_n").get_to(s.controller.every_n);
  c.at("dead_band").get_to(s.controller.dead_band);
  c.at("ewma_alpha").get_to(s.controller.ewma_alpha);
  return s;
}

}  // namespace

Status write_pipeline_config(const PipelineStageConfig& config, const std::string& path) {
  const json j = {{"spec", to_json(config.spec)}, {"store_file", config.store_file}};
  return write_file_atomically(path, j.dump(2) + "\n");
}

Result<PipelineStageConfig> read_pipeline_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::not_found(path + ": cannot read the pipeline configuration");
  try {
    const json j = json::parse(in);
    auto spec = spec_from_json(j.at("spec"));
    if (!spec) return spec.status().with_context(path);
    return PipelineStageConfig{std::move(spec).value(), j.at("store_file").get<std::string>()};
  } catch (const json::exception& e) {
    return Status::parse_error(path + ": " + e.what());
  }
}

std::string pipeline_timeline_part(const std::string& run_dir, std::int64_t rank) {
  return run_dir + "/.timeline-" + std::to_string(rank) + ".csv";
}

std::string encode_stage_report(const StageReport& report) {
  json j;
  if (const auto* c = std::get_if<StageCalibrationReport>(&report)) {
    j = {{"type", "calibration"}, {"rank", c->rank}, {"forward_s", c->forward_s}, {"backward_s", c->backward_s},
         {"update_s", c->update_s}, {"send_forward_s", c->send_forward_s}, {"send_backward_s", c->send_backward_s},
         {"allreduce_s", c->allreduce_s}, {"sync_s", c->sync_s}};
  } else if (const auto* s = std::get_if<StageStepReport>(&report)) {
    j = {{"type", "step"}, {"rank", s->rank}, {"step", s->step}, {"compute_s", s->compute_s}, {"wait_s", s->wait_s},
         {"step_s", s->step_s}, {"replica_s", s->replica_s}, {"micro_batches", s->micro_batches}};
  } else {
    j = {{"type", "done"}, {"rank", std::get<StageDoneReport>(report).rank}};
  }
  return j.dump() + "\n";
}

Result<StageReport> decode_stage_report(std::string_view line) {
  try {
    const json j = json::parse(line);
    const std::string type = j.at("type").get<std::string>();
    if (type == "calibration") {
      return StageReport(StageCalibrationReport{j.at("rank"), j.at("forward_s"), j.at("backward_s"), j.at("update_s"),
                                                j.at("send_forward_s"), j.at("send_backward_s"), j.at("allreduce_s"),
                                                j.at("sync_s")});
    }
    if (type == "step") {
      return StageReport(StageStepReport{j.at("rank"), j.at("step"), j.at("compute_s"), j.at("wait_s"), j.at("step_s"),
                                         j.at("replica_s").get<std::vector<Seconds>>(),
                                         j.at("micro_batches").get<std::vector<std::int64_t>>()});
    }
    if (type == "done") return StageReport(StageDoneReport{j.at("rank")});
    return Status::parse_error("unknown stage report type '" + type + "'");
  } catch (const json::exception& e) {
    return Status::parse_error(std::string("stage report: ") + e.what());
  }
}

}  // namespace omnilearn::emulator
