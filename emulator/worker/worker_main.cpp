// omnilearn-emulate-worker: the worker process that `omnilearn emulate` starts (one per scenario worker). Not
// meant to be run by hand: its arguments come from the launcher (launcher.cpp).
#include <boost/program_options.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "omnilearn/scenarios/scenario_json.h"
#include "worker_options.h"

namespace omnilearn::emulator::worker {
namespace {

namespace po = boost::program_options;

// Parses `args` against `opts` (no positional arguments); errors name the argument.
Result<po::variables_map> parse(const std::vector<std::string>& args, const po::options_description& opts) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Status::invalid_argument(e.what());
  }
  return vm;
}

template <typename T>
std::vector<T> all(const po::variables_map& vm, const char* key) {
  return vm.count(key) ? vm[key].as<std::vector<T>>() : std::vector<T>{};
}

}  // namespace

Result<WorkerOptions> parse_worker_args(const std::vector<std::string>& args) {
  WorkerOptions o;
  std::string config;
  po::options_description opts;
  opts.add_options()("config", po::value(&config)->required())("rank", po::value(&o.rank)->required())(
      "out-fd", po::value(&o.out_fd)->required())("in-fd", po::value(&o.in_fd))("threads", po::value(&o.threads))(
      "server", po::bool_switch(&o.server))("lead", po::bool_switch(&o.lead))("report-from", po::value(&o.report_from))(
      "comm-thread-file", po::value<std::vector<std::string>>())("compute-thread-file", po::value<std::vector<std::string>>());
  auto vm = parse(args, opts);
  if (!vm) return vm.status().with_context("started by omnilearn emulate");
  o.comm_thread_files = all<std::string>(*vm, "comm-thread-file");
  o.compute_thread_files = all<std::string>(*vm, "compute-thread-file");
  auto loaded = read_testbed_config(config);
  if (!loaded) return loaded.status();
  o.config = std::move(loaded).value();
  const bool asp = o.config.mode == controller::TrainingMode::kAsp;
  if (o.server ? !asp || o.rank != o.config.world : o.rank < 0 || o.rank >= o.config.world || o.threads < 1) {
    return Status::invalid_argument("--rank " + std::to_string(o.rank) + " does not fit the run's " +
                                    std::to_string(o.config.world) + " workers" + (o.server ? " (the ASP server's is the worker count)" : ""));
  }
  return o;
}

Result<CalibrateOptions> parse_calibrate_args(const std::vector<std::string>& args) {
  CalibrateOptions o;
  std::string settings;
  po::options_description opts;
  opts.add_options()("data-dir", po::value(&o.data_dir)->required())("settings", po::value(&settings)->required())(
      "threads", po::value(&o.threads))("samples", po::value(&o.samples))("seed", po::value(&o.seed))(
      "out-fd", po::value(&o.out_fd)->required())("in-fd", po::value(&o.in_fd)->required());
  auto vm = parse(args, opts);
  if (!vm) return vm.status().with_context("--calibrate (started by omnilearn calibrate)");
  try {
    o.settings = nlohmann::json::parse(settings).get<scenarios::EmulatorSpec>();
  } catch (const nlohmann::json::exception& e) {
    return Status::invalid_argument(std::string("--settings: ") + e.what());
  }
  if (o.settings.network == Network::kFromModel) return Status::invalid_argument("--settings: the network is not resolved");
  if (o.threads < 1) return Status::invalid_argument("--threads: expected at least 1");
  return o;
}

Result<PipelineStageOptions> parse_pipeline_stage_args(const std::vector<std::string>& args) {
  PipelineStageOptions o;
  po::options_description opts;
  opts.add_options()("config", po::value(&o.config)->required())("rank", po::value(&o.rank)->required())(
      "out-fd", po::value(&o.out_fd)->required())("in-fd", po::value(&o.in_fd)->required())(
      "comm-thread-file", po::value<std::vector<std::string>>());
  auto vm = parse(args, opts);
  if (!vm) return vm.status().with_context("--pipeline-stage (started by omnilearn emulate on a hybrid-testbed spec)");
  o.comm_thread_files = all<std::string>(*vm, "comm-thread-file");
  return o;
}

}  // namespace omnilearn::emulator::worker

int main(int argc, char** argv) {
  namespace w = omnilearn::emulator::worker;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--probe-cuda") return w::run_cuda_probe();
  if (!args.empty() && args[0] == "--calibrate") {
    auto calibrate = w::parse_calibrate_args(std::vector<std::string>(args.begin() + 1, args.end()));
    if (!calibrate) {
      std::cerr << "omnilearn-emulate-worker: " << calibrate.status().message() << "\n";
      return 2;
    }
    return w::run_calibration_worker(*calibrate);
  }
  if (!args.empty() && args[0] == "--pipeline-stage") {
    auto stage = w::parse_pipeline_stage_args(std::vector<std::string>(args.begin() + 1, args.end()));
    if (!stage) {
      std::cerr << "omnilearn-emulate-worker: " << stage.status().message() << "\n";
      return 2;
    }
    return w::run_pipeline_stage(*stage);
  }
  auto options = w::parse_worker_args(args);
  if (!options) {
    std::cerr << "omnilearn-emulate-worker: " << options.status().message() << "\n";
    return 2;
  }
  if (options->server) return w::run_parameter_server(*options);
  return options->config.mode == omnilearn::controller::TrainingMode::kAsp ? w::run_asp_worker(*options)
                                                                            : w::run_bsp_worker(*options);
}
