// `omnilearn-emulate-worker --calibrate`: a timing server for `omnilearn calibrate`. It loads Fashion-MNIST and the
// network, says "ready" (one JSON line on --out-fd), then answers commands read from --in-fd, one per line:
//   run <batch> <reps> <warmup>   time <reps> compute steps (sample draw + forward + backward, exactly the BSP
//                                 worker's compute time) after <warmup> untimed ones; reply one JSON line with
//                                 each step's wall time (times_s) and this thread's CPU time (cpu_times_s)
//   quit                          exit 0 (so does end of file)
// The launcher changes this process's CPU quota between commands, so library loading runs at full speed.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "torch_parts.h"
#include "worker_io.h"
#include "worker_options.h"

namespace omnilearn::emulator::worker {
namespace {

using Clock = std::chrono::steady_clock;

// This thread's CPU time: with one Torch thread (as `omnilearn calibrate` starts it) all the CPU a step uses.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int fail(const std::string& msg) {
  std::cerr << "omnilearn-emulate-worker --calibrate: " << msg << "\n";
  return 1;
}

int run(const CalibrateOptions& o) {
  at::set_num_threads(o.threads);
  torch::manual_seed(o.seed);
  auto train = load_split(o.settings, o.data_dir, /*train=*/true, o.samples);
  if (!train) return fail(train.status().message());
  auto made = make_net(o.settings);
  if (!made) return fail(made.status().message());
  Net net = std::move(made).value();
  std::int64_t n_params = 0;
  for (const auto& p : net.parameters) n_params += p.numel();
  const std::int64_t n = train->images.size(0);
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);

  Reporter out(o.out_fd);
  nlohmann::json ready = {{"event", "ready"}, {"network", net.name},
                          {"parameters", n_params}, {"forward_macs", forward_macs(net, o.settings.network)},
                          {"threads", o.threads}};
  out.send_line(ready.dump() + "\n");

  struct StepTime {
    double wall_s = 0.0;
    double cpu_s = 0.0;
  };
  auto step = [&](std::int64_t batch) {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(batch));
    for (auto& i : idx) i = pick(rng);
    const auto c0 = Clock::now();
    const double cpu0 = thread_cpu_s();
    auto index = torch::from_blob(idx.data(), {batch}, torch::kInt64);
    (void)forward_backward(net, train->images.index_select(0, index), train->labels.index_select(0, index),
                           o.settings.sample_cost_s * static_cast<double>(batch));
    return StepTime{std::chrono::duration<double>(Clock::now() - c0).count(), thread_cpu_s() - cpu0};
  };

  std::string pending, line;
  while (read_line(o.in_fd, pending, line)) {
    std::istringstream words(line);
    std::string command;
    words >> command;
    if (command == "quit") break;
    long long batch = 0, reps = 0, warmup = 0;
    if (command != "run" || !(words >> batch >> reps >> warmup) || batch < 1 || reps < 1 || warmup < 0) {
      return fail("bad command \"" + line + "\"");
    }
    for (long long i = 0; i < warmup; ++i) (void)step(batch);
    nlohmann::json reply = {{"event", "timed"}, {"batch", batch}, {"reps", reps}};
    std::vector<double> times, cpu_times;
    const auto w0 = Clock::now();
    for (long long i = 0; i < reps; ++i) {
      const StepTime t = step(batch);
      times.push_back(t.wall_s);
      cpu_times.push_back(t.cpu_s);
    }
    reply["wall_s"] = std::chrono::duration<double>(Clock::now() - w0).count();
    reply["times_s"] = times;
    reply["cpu_times_s"] = cpu_times;
    out.send_line(reply.dump() + "\n");
  }
  return 0;
}

}  // namespace

int run_calibration_worker(const CalibrateOptions& options) {
  try {
    return run(options);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace omnilearn::emulator::worker
