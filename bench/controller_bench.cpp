// One controller decision (plan_next with every worker measured) for clusters of 4 to 65,536 workers.
// Targets: < 1 ms at 1,024 workers, < 20 ms at 65,536. Run: build/bench/controller_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policy_registry.h"

namespace omnilearn::controller {
namespace {

void BM_Decision(benchmark::State& state, const std::string& policy) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ControllerOptions o;
  o.workers.assign(n, WorkerSpec{.lo = 16, .hi = 96, .nominal_capacity = 1.0});
  o.global_batch = 32 * static_cast<BatchSize>(n);
  o.every_n = 1;
  o.dead_band = 0.0;
  std::mt19937_64 rng(1);
  std::vector<double> per_sample(n);
  for (double& s : per_sample) s = std::uniform_real_distribution<double>(0.01, 0.08)(rng);
  auto c = Controller::create(o, std::move(*make_default_registry().make(policy, PolicyOptions{})));
  std::int64_t step = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ++step;
    for (WorkerId k = 0; k < n; ++k) {
      const BatchSize b = c->current_plan().batch[k];
      const double noise = std::uniform_real_distribution<double>(0.95, 1.05)(rng);
      (void)c->report(IterationDone{k, step, 0.0, per_sample[k] * static_cast<double>(b) * noise, b});
    }
    state.ResumeTiming();
    auto plan = c->plan_next(DecisionPoint{step, 0, static_cast<double>(step)});
    benchmark::DoNotOptimize(plan);
  }
  state.SetLabel(policy);
}

BENCHMARK_CAPTURE(BM_Decision, omnilearn, std::string("omnilearn"))
    ->Arg(4)->Arg(1024)->Arg(65536)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, affine, std::string("affine"))
    ->Arg(4)->Arg(1024)->Arg(65536)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace omnilearn::controller

BENCHMARK_MAIN();
