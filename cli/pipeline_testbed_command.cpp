// `omnilearn emulate SPEC.yaml` on a `kind: hybrid-testbed` spec, and `omnilearn validate RUN` on its run folder
// (pipeline_testbed_command.h): stage processes of an MLP under cgroup quotas, measured against hybrid::run_pipeline
// fed with the same run's calibration. The spec file is read here (yaml-cpp) into PipelineTestbedSpec.
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "cli/pipeline_testbed_command.h"
#include "omnilearn/emulator/pipeline_prediction.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::cli {
namespace {

template <typename T>
void read_if(const YAML::Node& node, const char* key, T& into) {
  if (node[key]) into = node[key].as<T>();
}

Status check_keys(const YAML::Node& node, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!known.count(key)) return Status::invalid_argument(where + ": unknown key '" + key + "'");
  }
  return Status::ok();
}

Status fill_spec(const YAML::Node& root, emulator::PipelineTestbedSpec& s) {
  OMNI_RETURN_IF_ERROR(check_keys(root, {"name", "kind", "stages", "replicas", "widths", "layers_per_stage", "shares",
                                         "micro_batch_size", "micro_batches", "schedule", "steps", "warmup_steps",
                                         "window", "seed", "learning_rate", "cpu_period_s", "calibration_reps",
                                         "stall_timeout_s", "controller"}, "spec"));
  if (!root["kind"] || root["kind"].as<std::string>() != "hybrid-testbed") {
    return Status::invalid_argument("kind: expected hybrid-testbed");
  }
  read_if(root, "name", s.name);
  read_if(root, "stages", s.stages);
  read_if(root, "replicas", s.replicas);
  read_if(root, "widths", s.widths);
  read_if(root, "layers_per_stage", s.layers_per_stage);
  read_if(root, "shares", s.shares);
  read_if(root, "micro_batch_size", s.micro_batch_size);
  read_if(root, "micro_batches", s.micro_batches);
  if (root["schedule"]) {
    auto kind = hybrid::parse_schedule_kind(root["schedule"].as<std::string>());
    if (!kind) return kind.status().with_context("schedule");
    s.schedule.kind = *kind;
  }
  read_if(root, "steps", s.steps);
  read_if(root, "warmup_steps", s.warmup_steps);
  read_if(root, "window", s.window);
  read_if(root, "seed", s.seed);
  read_if(root, "learning_rate", s.learning_rate);
  read_if(root, "cpu_period_s", s.cpu_period_s);
  read_if(root, "calibration_reps", s.calibration_reps);
  read_if(root, "stall_timeout_s", s.stall_timeout_s);
  if (const YAML::Node c = root["controller"]) {
    OMNI_RETURN_IF_ERROR(check_keys(c, {"policy", "every_n", "dead_band", "ewma_alpha"}, "controller"));
    read_if(c, "policy", s.controller.policy);
    read_if(c, "every_n", s.controller.every_n);
    read_if(c, "dead_band", s.controller.dead_band);
    read_if(c, "ewma_alpha", s.controller.ewma_alpha);
  }
  return Status::ok();
}

// Applies `key=value` (or `controller.key=value`) to the spec's YAML before it is read, as --set does for scenarios.
Status apply_override(YAML::Node& root, const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) return Status::invalid_argument("--set " + assignment + ": expected key=value");
  const std::string key = assignment.substr(0, eq);
  const YAML::Node value = YAML::Load(assignment.substr(eq + 1));
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) {
    root[key] = value;
  } else {
    YAML::Node inner = root[key.substr(0, dot)];
    inner[key.substr(dot + 1)] = value;
  }
  return Status::ok();
}

Result<emulator::PipelineTestbedSpec> read_spec(const std::string& path, const std::vector<std::string>& overrides) {
  emulator::PipelineTestbedSpec spec;
  try {
    YAML::Node root = YAML::LoadFile(path);
    for (const std::string& o : overrides) OMNI_RETURN_IF_ERROR(apply_override(root, o).with_context(path));
    OMNI_RETURN_IF_ERROR(fill_spec(root, spec).with_context(path));
  } catch (const YAML::Exception& e) {
    return Status::parse_error(path + ": " + e.what());
  }
  return spec;
}

const char* verdict(bool ok) { return ok ? "met" : "MISSED"; }

void print_comparison(const emulator::PipelineTestbedSpec& spec, const emulator::PipelineComparison& c) {
  const emulator::PipelineBars bars;
  const emulator::PipelineVerdict v = emulator::judge_pipeline(c, bars);
  std::printf("mean step: measured %.4f s, predicted %.4f s, error %+.1f%% (bar %.0f%%: %s)\n", c.measured_mean_s,
              c.predicted_mean_s, 100.0 * c.mean_error, 100.0 * bars.mean_error, verdict(v.mean_ok));
  std::printf("worst %lld-step window (from step %lld): error %+.1f%% (bar %.0f%%: %s)\n",
              static_cast<long long>(c.window), static_cast<long long>(c.worst_window_first_step),
              100.0 * c.worst_window_error, 100.0 * bars.window_error, verdict(v.window_ok));
  if (spec.replicas > 1) {
    std::printf("micro-batches per replica (mean): measured");
    for (double m : c.measured_micro_batches) std::printf(" %.2f", m);
    std::printf(", predicted");
    for (double m : c.predicted_micro_batches) std::printf(" %.2f", m);
    std::printf(" (bar %.1f each: %s)\n", bars.split_micro_batches, verdict(v.split_ok));
  }
}

}  // namespace

int run_pipeline_testbed_emulation(const std::string& spec_path, const std::vector<std::string>& overrides,
                                   const std::string& out_dir) {
  auto spec = read_spec(spec_path, overrides);
  if (!spec) {
    std::cerr << "omnilearn emulate: " << spec.status().message() << "\n";
    return 2;
  }
  const std::string out = out_dir.empty() ? "runs/" + spec->name : out_dir;
  auto result = emulator::run_pipeline_testbed(*spec, out);
  if (!result) {
    std::cerr << "omnilearn emulate: " << spec_path << ": " << result.status().message() << "\n";
    return 1;
  }
  if (result->exit_code != 0) {
    std::cerr << "omnilearn emulate: " << spec_path << ": " << result->message << "\n";
    return result->exit_code;
  }
  print_comparison(*spec, result->comparison);
  std::printf("run folder: %s (validation.json; omnilearn validate %s exits 1 when a bar is missed)\n", out.c_str(),
              out.c_str());
  return 0;
}

bool is_pipeline_run_folder(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path dir(path);
  return std::filesystem::is_directory(dir, ec) && std::filesystem::exists(dir / "pipeline.json", ec) &&
         std::filesystem::exists(dir / "steps.csv", ec);
}

int run_pipeline_run_validation(const std::string& run_dir) {
  auto check = emulator::check_pipeline_run(run_dir);
  if (!check) {
    std::cerr << "omnilearn validate: " << check.status().message() << "\n";
    return 1;
  }
  std::printf("%s (%s)\n", check->spec.name.c_str(), run_dir.c_str());
  print_comparison(check->spec, check->comparison);
  const bool ok = emulator::judge_pipeline(check->comparison).all();
  std::printf("%s; validation.json rewritten\n", ok ? "every bar met" : "a bar missed");
  return ok ? 0 : 1;
}

}  // namespace omnilearn::cli
