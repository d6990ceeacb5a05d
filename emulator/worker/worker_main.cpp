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
    else if (a == "--cfg") OMNI_RETURN_IF_ERROR(apply_setting(o.config, *v));
    else if (!to_int(*v, n)) return Status::invalid_argument(a + ": expected an integer, got " + *v);
    else if (a == "--rank") o.rank = static_cast<int>(n);
    else if (a == "--world") o.world = static_cast<int>(n);
    else if (a == "--port") o.port = static_cast<int>(n);
    else if (a == "--t0-ns") o.t0_ns = n;
    else if (a == "--out-fd") o.out_fd = static_cast<int>(n);
    else if (a == "--in-fd") o.in_fd = static_cast<int>(n);
    else if (a == "--threads") o.threads = static_cast<int>(n);
    else return Status::invalid_argument("unknown argument " + a);
  }
  if (o.scenario_path.empty() || o.out_fd < 0 || o.world < 1 || o.rank < 0 || o.rank >= o.world) {
    return Status::invalid_argument("needs --scenario, --rank < --world and --out-fd (started by omnilearn emulate)");
  }
  return o;
}

}  // namespace omnilearn::emulator::worker

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto options = omnilearn::emulator::worker::parse_worker_args(args);
  if (!options) {
    std::cerr << "omnilearn-emulate-worker: " << options.status().message() << "\n";
    return 2;
  }
  return omnilearn::emulator::worker::run_bsp_worker(*options);
}
