// sim_scale: how fast the simulator runs BSP at scale. One configuration per process (SimGrid allows one engine
// per process), printed as one JSON line:
//   sim_scale omnilearn <workers> <iterations> <out_dir>   run_simulation(): controller, ring all-reduce model
//   sim_scale bare <workers> <iterations>                  bare SimGrid: the same compute + a barrier only
// bench/sim_scale.sh runs both for 1,024 and 8,192 workers and prints the ratio.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "omnilearn/scenarios/model_catalog.h"
#include "omnilearn/sim/simulation.h"

namespace {

namespace sg4 = simgrid::s4u;

constexpr double kCoreFlops = 10e9;

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Workers of 8..16 cores, so that the controller has something to balance.
double worker_speed(std::size_t k) { return kCoreFlops * static_cast<double>(8 + k % 9); }

omnilearn::scenarios::Scenario scale_scenario(std::size_t workers, std::int64_t iterations) {
  omnilearn::scenarios::Scenario s;
  s.name = "sim_scale";
  for (std::size_t k = 0; k < workers; ++k) {
    omnilearn::scenarios::NodeSpec node;
    node.name = std::string("n").append(std::to_string(k));
    node.speed_flops = worker_speed(k);
    s.cluster.workers.push_back(node);
  }
  s.cluster.parameter_server.name = "ps";
  s.workload.model = *omnilearn::scenarios::find_model("resnet18", /*small_images=*/true);
  s.workload.global_batch = static_cast<omnilearn::BatchSize>(32 * workers);
  s.workload.dataset_samples = s.workload.global_batch * (iterations + 1);
  s.policy.name = "omnilearn";
  s.policy.min_batch = 16;
  s.policy.max_batch = 96;
  s.policy.every_n = 10;
  s.max_iterations = iterations;
  s.outputs.timeline = false;
  return s;
}

int run_omnilearn(std::size_t workers, std::int64_t iterations, const std::string& out_dir) {
  const auto scenario = scale_scenario(workers, iterations);
  omnilearn::sim::SimOptions options;
  options.output_dir = out_dir;
  options.iteration_rows = false;
  options.timeline = false;
  options.reuse = omnilearn::run::FolderReuse::kReplace;  // a scratch folder: a rerun replaces it
  const auto t0 = std::chrono::steady_clock::now();
  auto summary = omnilearn::sim::run_simulation(scenario, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!summary) {
    std::fprintf(stderr, "sim_scale: %s\n", summary.status().message().c_str());
    return 1;
  }
  std::printf("{\"kind\":\"omnilearn\",\"workers\":%zu,\"iterations\":%lld,\"wall_s\":%.3f,\"peak_rss_mb\":%.1f,"
              "\"worker_iterations_per_s\":%.0f,\"simulated_s\":%.3f}\n",
              workers, static_cast<long long>(summary->iterations), wall, peak_rss_mb(),
              static_cast<double>(workers) * static_cast<double>(summary->iterations) / wall, summary->total_time_s);
  return 0;
}

// The floor: one host per worker on a star, each actor computes its share and meets the others at a barrier.
int run_bare(std::size_t workers, std::int64_t iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  int argc = 3;
  char arg0[] = "sim_scale";
  char arg1[] = "--log=root.thres:critical";
  char arg2[] = "--cfg=contexts/stack-size:512";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  sg4::Engine engine(&argc, argv);
  auto* zone = sg4::create_star_zone("bare");
  const sg4::Link* backbone = zone->create_link("backbone", 1.25e10)->seal();
  std::vector<sg4::Host*> hosts;
  for (std::size_t k = 0; k < workers; ++k) {
    sg4::Host* h = zone->create_host("h" + std::to_string(k), worker_speed(k))->seal();
    const sg4::Link* l = zone->create_split_duplex_link("l" + std::to_string(k), 1.25e9)->set_latency(1e-5)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(l, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(backbone)}, true);
    hosts.push_back(h);
  }
  zone->seal();
  auto barrier = sg4::Barrier::create(static_cast<unsigned>(workers));
  const double flops = 1.68e9 * 32;
  for (std::size_t k = 0; k < workers; ++k) {
    sg4::Actor::create("w" + std::to_string(k), hosts[k], [barrier, iterations, flops] {
      for (std::int64_t i = 0; i < iterations; ++i) {
        sg4::this_actor::execute(flops);
        barrier->wait();
      }
    });
  }
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"kind\":\"bare\",\"workers\":%zu,\"iterations\":%lld,\"wall_s\":%.3f,\"peak_rss_mb\":%.1f,"
              "\"worker_iterations_per_s\":%.0f,\"simulated_s\":%.3f}\n",
              workers, static_cast<long long>(iterations), wall, peak_rss_mb(),
              static_cast<double>(workers) * static_cast<double>(iterations) / wall, sg4::Engine::get_clock());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sim_scale omnilearn|bare <workers> <iterations> [out_dir]\n");
    return 2;
  }
  const std::string kind = argv[1];
  const auto workers = static_cast<std::size_t>(std::strtoull(argv[2], nullptr, 10));
  const std::int64_t iterations = std::strtoll(argv[3], nullptr, 10);
  if (kind == "bare") return run_bare(workers, iterations);
  return run_omnilearn(workers, iterations, argc > 4 ? argv[4] : "/tmp/sim_scale_run");
}
