// `omnilearn emulate-pipeline SPEC.yaml --out DIR`: the pipeline testbed (emulator/include/omnilearn/emulator/
// pipeline_testbed.h): stage processes of an MLP under cgroup quotas, measured against hybrid::run_pipeline fed with
// the same run's calibration. The spec file is read here (yaml-cpp) into PipelineTestbedSpec; nothing else is.
#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;

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
  if (root["kind"] && root["kind"].as<std::string>() != "pipeline-testbed") {
    return Status::invalid_argument("kind: expected pipeline-testbed");
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

void print_comparison(const emulator::PipelineTestbedSpec& spec, const emulator::PipelineTestbedResult& r) {
  const emulator::PipelineComparison& c = r.comparison;
  std::printf("mean step: measured %.4f s, predicted %.4f s, error %+.1f%% (bar 5%%)\n", c.measured_mean_s,
              c.predicted_mean_s, 100.0 * c.mean_error);
  std::printf("worst %lld-step window (from step %lld): error %+.1f%% (bar 10%%)\n", static_cast<long long>(c.window),
              static_cast<long long>(c.worst_window_first_step), 100.0 * c.worst_window_error);
  if (spec.replicas > 1) {
    std::printf("micro-batches per replica (mean): measured");
    for (double m : c.measured_micro_batches) std::printf(" %.2f", m);
    std::printf(", predicted");
    for (double m : c.predicted_micro_batches) std::printf(" %.2f", m);
    std::printf("\n");
  }
}

}  // namespace

Result<emulator::PipelineTestbedSpec> read_pipeline_testbed_spec(const std::string& path) {
  emulator::PipelineTestbedSpec spec;
  try {
    OMNI_RETURN_IF_ERROR(fill_spec(YAML::LoadFile(path), spec).with_context(path));
  } catch (const YAML::Exception& e) {
    return Status::parse_error(path + ": " + e.what());
  }
  return spec;
}

int run_emulate_pipeline_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "omnilearn emulate-pipeline SPEC.yaml --out DIR [options]\n\n"
      "Runs a pipeline of an MLP on this host: one process per (replica, stage), each in its own cgroup at its CPU\n"
      "share, activations and gradients over Gloo in the 1F1B order, replicas splitting the micro-batches by the\n"
      "OmniLearn controller. Each stage is first calibrated at a full core; hybrid::run_pipeline fed with that\n"
      "calibration predicts every step. Writes pipeline.json, calibration.csv, steps.csv, stages.csv and\n"
      "validation.json into DIR. Needs root (cgroups). Exit codes: 0 done, 1 failure, 2 usage, 130/143 signals.\n"
      "Shipped specs: scenarios/hybrid/testbed-*.yaml (docs/testbed.md, \"A pipeline under cgroup quotas\").\n\noptions");
  opts.add_options()("help,h", "print this help")("spec", po::value<std::string>(), "pipeline spec YAML file")(
      "out", po::value<std::string>(), "run folder (required)")("seed", po::value<std::uint64_t>(), "seed (overrides the spec's)")(
      "steps", po::value<std::int64_t>(), "measured steps (overrides the spec's)");
  po::variables_map vm;
  if (auto done = parse_command_line("emulate-pipeline", args, opts, "spec", /*required=*/true, vm)) return *done;
  if (!vm.count("out")) {
    std::cerr << "omnilearn emulate-pipeline: missing --out DIR\n";
    return 2;
  }
  auto spec = read_pipeline_testbed_spec(vm["spec"].as<std::string>());
  if (!spec) {
    std::cerr << "omnilearn emulate-pipeline: " << spec.status().message() << "\n";
    return 2;
  }
  if (vm.count("seed")) spec->seed = vm["seed"].as<std::uint64_t>();
  if (vm.count("steps")) spec->steps = vm["steps"].as<std::int64_t>();
  const std::string out = vm["out"].as<std::string>();
  auto result = emulator::run_pipeline_testbed(*spec, out);
  if (!result) {
    std::cerr << "omnilearn emulate-pipeline: " << result.status().message() << "\n";
    return 1;
  }
  if (result->exit_code != 0) {
    std::cerr << "omnilearn emulate-pipeline: " << result->message << "\n";
    return result->exit_code;
  }
  print_comparison(*spec, *result);
  std::printf("run folder: %s (validation.json)\n", out.c_str());
  return 0;
}

}  // namespace omnilearn::cli
