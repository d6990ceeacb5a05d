// Uses each exported library once: the controller balances 4 synthetic workers at HL8 (the global batch stays
// 128), a trace is parsed, an installed scenario file (argv[1]) is loaded and its controller made (run layer). Prints
// one line; exit 0 when all hold.
#include <cstdio>
#include <numeric>
#include <utility>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/controller/synthetic_cluster.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/traces/trace_file.h"

namespace ctl = omnilearn::controller;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENARIO.yaml\n");
    return 2;
  }
  ctl::SyntheticCluster cluster(ctl::workers_from_cores({6, 6, 4, 32}, 0.48, 0.0), 0.0, 1);
  auto policy = ctl::make_default_registry().make("omnilearn", ctl::PolicyOptions{});
  ctl::ControllerOptions options;
  options.global_batch = 128;
  options.workers.assign(4, ctl::WorkerSpec{.lo = 16, .hi = 96, .nominal_capacity = 1.0});
  if (!policy) return 1;
  auto controller = ctl::Controller::create(options, std::move(*policy));
  if (!controller) return 1;
  long batch_sum = 0;
  for (int i = 0; i < 50; ++i) {
    auto step = cluster.step(*controller);
    if (!step) return 1;
    batch_sum = std::accumulate(step->batch.begin(), step->batch.end(), 0L);
  }
  auto trace = omnilearn::traces::parse_trace("time_s,worker,fraction\n0,a,1\n10,a,0.5\n", "inline");
  auto scenario = omnilearn::scenarios::load_scenario(argv[1]);
  if (!trace || !scenario) {
    std::fprintf(stderr, "consumer: %s\n", (!trace ? trace.status() : scenario.status()).message().c_str());
    return 1;
  }
  // The run layer: the scenario's own controller, as the simulator and the testbed make it.
  auto from_scenario = omnilearn::run::make_controller(omnilearn::run::controller_spec(*scenario));
  if (!from_scenario) {
    std::fprintf(stderr, "consumer: %s\n", from_scenario.status().message().c_str());
    return 1;
  }
  std::printf("consumer: batch sum %ld, trace workers %zu, scenario %s with %zu workers\n", batch_sum,
              trace->worker_count(), scenario->name.c_str(), scenario->worker_count());
  return batch_sum == 128 ? 0 : 1;
}
