// omnilearn-emulate-worker: the worker process that `omnilearn emulate` starts (one per scenario worker). Not
// meant to be run by hand: its arguments come from the launcher (launcher.cpp).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "worker_options.h"

namespace omnilearn::emulator::worker {

Result<WorkerOptions> parse_worker_args(const std::vector<std::string>& args) {
  WorkerOptions o;
  auto need = [&](std::size_t& i) -> Result<std::string> {
    if (i + 1 >= args.size()) return Status::invalid_argument(args[i] + ": missing value");
    return args[++i];
  };
  auto to_int = [](const std::string& s, long long& out) {
    char* end = nullptr;
    out = std::strtoll(s.c_str(), &end, 10);
    return !s.empty() && *end == '\0';
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto v = need(i);
    if (!v) return v.status();
    long long n = 0;
    if (a == "--scenario") o.scenario_path = *v;
    else if (a == "--set") o.overrides.push_back(*v);
    else if (a == "--data-dir") o.data_dir = *v;
    else if (a == "--store-host") o.store_host = *v;
    else if (a == "--bind") o.bind = *v;
    else if (a == "--store-file") o.store_file = *v;
    else if (a == "--comm-thread-file") o.comm_thread_files.push_back(*v);
    else if (a == "--compute-thread-file") o.compute_thread_files.push_back(*v);
    else if (a == "--cfg") OMNI_RETURN_IF_ERROR(apply_setting(o.config, *v));
    else if (!to_int(*v, n)) return Status::invalid_argument(a + ": expected an integer, got " + *v);
    else if (a == "--rank") o.rank = static_cast<int>(n);
    else if (a == "--world") o.world = static_cast<int>(n);
    else if (a == "--port") o.port = static_cast<int>(n);
    else if (a == "--t0-ns") o.t0_ns = n;
    else if (a == "--out-fd") o.out_fd = static_cast<int>(n);
    else if (a == "--in-fd") o.in_fd = static_cast<int>(n);
    else if (a == "--threads") o.threads = static_cast<int>(n);
    else if (a == "--server") o.server = n != 0;
    else if (a == "--asp") o.asp = n != 0;
    else if (a == "--lead") o.lead = n != 0;
    else if (a == "--report-from") o.report_from = static_cast<int>(n);
    else return Status::invalid_argument("unknown argument " + a);
  }
  if (o.server) {
    if (o.rank != o.world) return Status::invalid_argument("--server: the parameter server's --rank is --world");
    if (o.scenario_path.empty() || o.out_fd < 0) return Status::invalid_argument("--server needs --scenario and --out-fd");
    return o;
  }
  if (o.scenario_path.empty() || o.out_fd < 0 || o.world < 1 || o.rank < 0 || o.rank >= o.world) {
    return Status::invalid_argument("needs --scenario, --rank < --world and --out-fd (started by omnilearn emulate)");
  }
  return o;
}

Result<CalibrateOptions> parse_calibrate_args(const std::vector<std::string>& args) {
  CalibrateOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) return Status::invalid_argument(a + ": missing value");
    const std::string& v = args[++i];
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    const bool is_int = !v.empty() && *end == '\0';
    if (a == "--data-dir") o.data_dir = v;
    else if (a == "--network") {
      if (v != "lenet" && v != "resnet") return Status::invalid_argument("--network: lenet or resnet, got " + v);
      o.network = v == "resnet" ? Network::kResNet : Network::kLeNet;
    } else if (a == "--sample-cost") {
      char* dend = nullptr;
      o.sample_cost_s = std::strtod(v.c_str(), &dend);
      if (v.empty() || *dend != '\0' || !(o.sample_cost_s >= 0.0)) {
        return Status::invalid_argument("--sample-cost: expected CPU seconds >= 0, got " + v);
      }
    } else if (!is_int) return Status::invalid_argument(a + ": expected an integer, got " + v);
    else if (a == "--threads") o.threads = static_cast<int>(n);
    else if (a == "--samples") o.samples = n;
    else if (a == "--seed") o.seed = static_cast<std::uint64_t>(n);
    else if (a == "--out-fd") o.out_fd = static_cast<int>(n);
    else if (a == "--in-fd") o.in_fd = static_cast<int>(n);
    else return Status::invalid_argument("unknown argument " + a);
  }
  if (o.data_dir.empty() || o.out_fd < 0 || o.in_fd < 0 || o.threads < 1) {
    return Status::invalid_argument("--calibrate needs --data-dir, --out-fd and --in-fd (started by omnilearn calibrate)");
  }
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
  auto options = omnilearn::emulator::worker::parse_worker_args(args);
  if (!options) {
    std::cerr << "omnilearn-emulate-worker: " << options.status().message() << "\n";
    return 2;
  }
  if (options->server) return w::run_parameter_server(*options);
  return options->asp ? w::run_asp_worker(*options) : w::run_bsp_worker(*options);
}
