// `omnilearn calibrate`: measures the testbed worker's compute time on this host against batch size and CPU quota,
// writes a model profile for the simulator and the throttle-fidelity table.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "omnilearn/emulator/calibration.h"
#include "omnilearn/emulator/testbed_config.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/enum_names.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace omnilearn::cli {

namespace po = boost::program_options;

namespace {

template <typename T>
bool parse_list(const std::string& text, std::vector<T>& out) {
  out.clear();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::istringstream one(item);
    T v{};
    if (!(one >> v) || !one.eof()) return false;
    out.push_back(v);
  }
  return !out.empty();
}

// The options of `omnilearn calibrate`, with its help text.
po::options_description calibrate_options() {
  po::options_description opts(
      "omnilearn calibrate [options]\n\n"
      "Measures, on this host, the testbed worker's compute time (forward+backward of the BSP worker's own step, one\n"
      "thread) against batch size at a full core and fits t = a + c*b (least squares on relative residuals, so that\n"
      "small batches count as much as large ones; R^2 reported); then, under a\n"
      "real cgroup CPU quota, against CPU share (0.1..1.0 of a core): achieved CPU share (cgroup CPU usage / wall\n"
      "time) and throughput relative to the full core (the throttle-fidelity table). Writes OUT/profile.yaml (load\n"
      "it in a scenario as `workload.model: OUT/profile.yaml`) and OUT/fidelity.csv. The share sweep needs write\n"
      "access to the cgroup tree (root); without it only the batch sweep runs. Exit codes: 0 done, 1 failure, 2 usage.\n\n"
      "examples:\n"
      "  omnilearn calibrate --out runs/calibrate\n"
      "  omnilearn calibrate --batches 8,16,32,64,128 --shares 0.25,0.5,1 --reps 10 --out runs/cal-quick\n"
      "  omnilearn calibrate --network resnet --no-shares --out runs/cal-resnet\n"
      "  omnilearn calibrate --sample-cost 0.001 --out runs/cal-tb   # the testbed scenarios' emulated cost\n"
      "  omnilearn calibrate --scenario my-model.yaml --out runs/cal-mine   # the scenario's own model and data\n"
      "  omnilearn sim scenarios/paper/bsp-hl8.yaml --set workload.model=runs/calibrate/profile.yaml\n\n"
      "options");
  opts.add_options()("help,h", "print this help")(
      "out", po::value<std::string>()->default_value("runs/calibrate"), "output folder")(
      "network", po::value<std::string>(), "lenet or resnet (default lenet)")(
      "sample-cost", po::value<double>(),
      "CPU seconds per sample of the emulated model, as the scenario's emulator.sample_cost_s (default 0: the "
      "network's own cost on this host)")(
      "scenario", po::value<std::string>(), "take the model, its data and its emulated cost from this scenario's "
      "emulator section (network, or model_file with input_shape and loss; train_data; sample_cost_s) instead of "
      "--network and --sample-cost")(
      "set", po::value<std::vector<std::string>>()->composing(), "with --scenario: override a scenario field")(
      "name", po::value<std::string>(), "profile name (default: <network or model file name>-calibrated)")(
      "batches", po::value<std::string>()->default_value("8,16,32,48,64,96,128"), "batch sizes of the batch sweep")(
      "shares", po::value<std::string>()->default_value("0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"),
      "CPU shares (of one core) of the quota sweep")(
      "share-batch", po::value<long long>()->default_value(32), "batch size of the quota sweep")(
      "reps", po::value<int>()->default_value(20), "timed steps per point")(
      "warmup", po::value<int>()->default_value(3), "untimed steps before each point")(
      "rounds", po::value<int>()->default_value(5),
      "passes over the batch sweep, pooled per batch (a slower spell of the host falls on every batch alike)")(
      "period", po::value<double>()->default_value(0.010), "CFS quota period in seconds (the testbed's default)")(
      "cpuset", po::value<std::string>()->default_value(""), "pin the worker to these CPUs, e.g. 1")(
      "no-shares", "skip the quota sweep");
  return opts;
}

// What is measured: --scenario's testbed settings (network resolved, files by their full path), or --network and
// --sample-cost; a usage error is printed.
std::optional<scenarios::EmulatorSpec> model_settings(const po::variables_map& vm) {
  if (vm.count("scenario")) {
    if (vm.count("network") || vm.count("sample-cost")) {
      std::cerr << "omnilearn calibrate: --scenario names the model: leave out --network and --sample-cost (or --set "
                   "emulator.network=... / emulator.sample_cost_s=...)\n";
      return std::nullopt;
    }
    const auto overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
    auto scenario = scenarios::load_scenario(vm["scenario"].as<std::string>(), overrides);
    auto config = scenario ? emulator::testbed_config(*scenario) : Result<emulator::TestbedConfig>(scenario.status());
    if (!config) {
      std::cerr << "omnilearn calibrate: " << config.status().message() << "\n";
      return std::nullopt;
    }
    return config->settings;
  }
  scenarios::EmulatorSpec s = emulator::CalibrationOptions::lenet();
  const std::string network = vm.count("network") ? vm["network"].as<std::string>() : "lenet";
  const auto chosen = scenarios::enum_from_name<emulator::Network>(network);
  if (chosen != emulator::Network::kLeNet && chosen != emulator::Network::kResNet) {
    std::cerr << "omnilearn calibrate: --network: lenet or resnet, got " << network << "\n";
    return std::nullopt;
  }
  s.network = *chosen;
  if (vm.count("sample-cost")) s.sample_cost_s = vm["sample-cost"].as<double>();
  return s;
}

// The profile's default name: the network's, or the model file's (without its extension).
std::string model_name(const scenarios::EmulatorSpec& s) {
  if (s.network == emulator::Network::kTorchScript) return std::filesystem::path(s.model_file).stem().string();
  return std::string(scenarios::enum_name(s.network));
}

// The calibration's options from the command line, or the usage error printed.
std::optional<emulator::CalibrationOptions> calibration_options(const po::variables_map& vm) {
  emulator::CalibrationOptions o;
  auto settings = model_settings(vm);
  if (!settings) return std::nullopt;
  o.settings = *settings;
  std::vector<long long> batches;
  if (!parse_list(vm["batches"].as<std::string>(), batches) || batches.size() < 2) {
    std::cerr << "omnilearn calibrate: --batches: expected at least two comma-separated integers\n";
    return std::nullopt;
  }
  o.batches.assign(batches.begin(), batches.end());
  if (!parse_list(vm["shares"].as<std::string>(), o.shares)) {
    std::cerr << "omnilearn calibrate: --shares: expected comma-separated numbers in (0, 1]\n";
    return std::nullopt;
  }
  o.share_batch = vm["share-batch"].as<long long>();
  o.reps = vm["reps"].as<int>();
  o.warmup = vm["warmup"].as<int>();
  o.rounds = vm["rounds"].as<int>();
  o.period_s = vm["period"].as<double>();
  o.cpuset = vm["cpuset"].as<std::string>();
  o.share_sweep = vm.count("no-shares") == 0;
  o.log = [](const std::string& line) { std::cerr << line << "\n"; };
  return o;
}

// `text` into OUT/`file`; false with the error printed.
bool write_output(const std::string& out, const std::string& file, const std::string& text) {
  if (Status st = run::write_file_atomically(out + "/" + file, text); !st.is_ok()) {
    std::cerr << "omnilearn calibrate: cannot write " << out << "/" << file << " (" << st.message() << ")\n";
    return false;
  }
  return true;
}

void print_law(const emulator::CalibrationReport& report, const std::string& name) {
  std::printf("%s: %lld parameters; t = %.4g ms + %.4g ms * b (R^2 = %.4f) over %zu batch sizes\n", name.c_str(),
              static_cast<long long>(report.parameters), 1e3 * report.fit.fixed, 1e3 * report.fit.per_unit,
              report.fit.r2, report.batches.size());
  std::printf("  %6s %12s %12s\n", "batch", "median_ms", "mean_ms");
  for (const auto& b : report.batches) {
    std::printf("  %6lld %12.3f %12.3f\n", static_cast<long long>(b.batch), 1e3 * b.median_s, 1e3 * b.mean_s);
  }
}

void print_fidelity(const emulator::CalibrationReport& report, const emulator::CalibrationOptions& o,
                    const std::string& out) {
  std::printf("throttle fidelity (batch %lld, cgroup quota, %.0f ms period): %s/fidelity.csv\n",
              static_cast<long long>(o.share_batch), 1e3 * o.period_s, out.c_str());
  std::printf("  %12s %14s %20s %19s %9s\n", "target_share", "achieved_share", "throughput_samples_s",
              "relative_throughput", "slowdown");
  for (const auto& f : report.fidelity) {
    std::printf("  %12.2f %14.3f %20.1f %19.3f %9.2f\n", f.target_share, f.achieved_share, f.throughput_samples_s,
                f.relative_throughput, f.slowdown);
  }
}

}  // namespace

int run_calibrate_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
  (void)argv;
  const po::options_description opts = calibrate_options();
  po::variables_map vm;
  if (auto done = parse_command_line("calibrate", args, opts, /*positional=*/"", /*required=*/false, vm)) return *done;
  const std::optional<emulator::CalibrationOptions> o = calibration_options(vm);
  if (!o) return 2;
  const std::string network = model_name(o->settings);
  std::cerr << "omnilearn calibrate: measuring " << network << " (batch sweep" << (o->share_sweep ? " + quota sweep" : "")
            << ")\n";
  auto report = emulator::run_calibration(*o);
  if (!report) {
    std::cerr << "omnilearn calibrate: " << report.status().message() << "\n";
    return 1;
  }
  const std::string out = vm["out"].as<std::string>();
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  const std::string name = vm.count("name") ? vm["name"].as<std::string>() : network + "-calibrated";
  if (!write_output(out, "profile.yaml", emulator::profile_yaml(*report, name))) return 1;
  print_law(*report, name);
  std::printf("profile: %s/profile.yaml\n", out.c_str());
  if (report->fidelity.empty()) {
    std::printf("throttle fidelity: not measured (%s)\n", report->share_sweep_skipped.c_str());
    return 0;
  }
  if (!write_output(out, "fidelity.csv", emulator::fidelity_csv(*report))) return 1;
  print_fidelity(*report, *o, out);
  return 0;
}

}  // namespace omnilearn::cli
