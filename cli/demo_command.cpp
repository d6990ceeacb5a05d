// `omnilearn demo`: the controller in closed loop with synthetic workers t_k(b) = alpha_k + beta_k b at one of the
// paper's heterogeneity levels, printed as a table next to the uniform split and the oracle.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/controller/synthetic_cluster.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
using namespace omnilearn::controller;

const std::map<std::string, std::vector<int>> kLevels{
    {"hl1", {12, 12, 12, 12}}, {"hl2", {12, 12, 8, 16}}, {"hl4", {9, 8, 6, 25}}, {"hl8", {6, 6, 4, 32}}};

struct DemoRun {
  double total_s = 0.0;
  std::vector<SyntheticStep> decisions;
};

Result<DemoRun> run(const std::string& policy, const std::vector<int>& cores, double fixed_share, double noise,
                    std::uint64_t seed, int steps, double dead_band) {
  std::vector<SyntheticWorker> workers = workers_from_cores(cores, /*per_core_sample_s=*/0.48, 0.0);
  for (SyntheticWorker& w : workers) {
    const double t32 = 32 * w.beta_s;
    w.alpha_s = fixed_share * t32;
    w.beta_s = (1.0 - fixed_share) * t32 / 32;
  }
  SyntheticCluster cluster(workers, noise, seed);
  PolicyOptions po;
  po.true_costs = [&cluster](const ClusterSnapshot&) { return cluster.cost_functions(); };
  auto p = make_default_registry().make(policy, po);
  if (!p) return p.status();
  ControllerOptions o;
  o.global_batch = 128;
  o.workers.assign(cores.size(), WorkerSpec{.lo = 16, .hi = 96, .nominal_capacity = 1.0});
  for (std::size_t k = 0; k < cores.size(); ++k) o.workers[k].nominal_capacity = cores[k];
  o.dead_band = dead_band;
  auto c = Controller::create(o, std::move(*p));
  if (!c) return c.status();
  DemoRun out;
  for (int i = 0; i < steps; ++i) {
    auto s = cluster.step(*c);
    if (!s) return s.status();
    out.total_s += s->step_s;
    if (s->plan.decided) out.decisions.push_back(*s);
  }
  return out;
}

}  // namespace

int run_demo_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "omnilearn demo [options]\n\n"
      "Runs the batch controller against 4 synthetic workers sharing a 48-core host (global batch 128,\n"
      "bounds 16..96, a decision every 10 steps) and prints each decision, then total time per policy.\n\n"
      "examples:\n  omnilearn demo --level hl8\n  omnilearn demo --level hl4 --policy affine --fixed-share 0.3\n\n"
      "options");
  opts.add_options()("help,h", "print this help")(
      "level", po::value<std::string>()->default_value("hl4"), "heterogeneity level: hl1, hl2, hl4 or hl8")(
      "policy", po::value<std::string>()->default_value("omnilearn"), "policy to trace: uniform, static, omnilearn, "
      "affine, oracle")("steps", po::value<int>()->default_value(200), "BSP steps to run")(
      "noise", po::value<double>()->default_value(0.03), "relative noise (std. dev.) on each compute time")(
      "fixed-share", po::value<double>()->default_value(0.0), "fixed per-iteration cost as a share of t(32)")(
      "dead-band", po::value<double>()->default_value(0.05), "dead-band on the largest relative batch change")(
      "seed", po::value<std::uint64_t>()->default_value(1), "noise seed");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "omnilearn demo: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  const auto level = kLevels.find(vm["level"].as<std::string>());
  if (level == kLevels.end()) {
    std::cerr << "omnilearn demo: --level: expected hl1, hl2, hl4 or hl8, got '" << vm["level"].as<std::string>()
              << "'\n";
    return 2;
  }
  const auto go = [&](const std::string& policy) {
    return run(policy, level->second, vm["fixed-share"].as<double>(), vm["noise"].as<double>(),
               vm["seed"].as<std::uint64_t>(), vm["steps"].as<int>(), vm["dead-band"].as<double>());
  };
  const std::string traced = vm["policy"].as<std::string>();
  auto main_run = go(traced);
  if (!main_run) {
    std::cerr << "omnilearn demo: " << main_run.status().message() << "\n";
    return 1;
  }
  std::printf("level %s, cores", level->first.c_str());
  for (int c : level->second) std::printf(" %d", c);
  std::printf(", policy %s\n\n%6s %10s %8s  %-22s %s\n", traced.c_str(), "step", "reason", "imbal", "batches",
              "step time (s)");
  for (const SyntheticStep& s : main_run->decisions) {
    std::string batches;
    for (BatchSize b : s.plan.batch) batches += std::to_string(b) + " ";
    std::printf("%6lld %10s %7.1f%%  %-22s %.3f\n", static_cast<long long>(s.step), to_string(s.plan.reason),
                100.0 * s.plan.imbalance, batches.c_str(), s.step_s);
  }
  std::printf("\n%-10s %12s %14s\n", "policy", "total (s)", "vs uniform");
  auto uniform = go("uniform");
  for (const char* policy : {"uniform", "static", "omnilearn", "affine", "oracle"}) {
    auto r = go(policy);
    if (!r || !uniform) continue;
    std::printf("%-10s %12.1f %+13.1f%%\n", policy, r->total_s, 100.0 * (r->total_s / uniform->total_s - 1.0));
  }
  return 0;
}

}  // namespace omnilearn::cli
