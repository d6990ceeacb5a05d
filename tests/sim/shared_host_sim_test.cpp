// Workers that share a host. The oracle's true costs where a worker's compute rate is not its node's speed (two
// workers on a single-core host compute at half its speed each, three on a two-core host at two thirds): it plans by
// the true rates, and no other policy beats it on a static platform. Availability that changes the speed of two
// workers on one host is refused (SimGrid gives a host one speed profile).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::four_worker_scenario;
using testing::read_csv;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

struct Host {
  std::string name;
  double speed_flops;
  int cores;
};

// A platform file of `hosts` and a 10 Gflop/s `ps`, each behind its own 1.25 GB/s, 10 us link to one switch.
std::string write_platform(const std::vector<Host>& hosts, const std::string& dir) {
  std::vector<Host> all = hosts;
  all.push_back({"ps", 10e9, 1});
  std::string host_lines, link_lines, route_lines;  // the DTD's order: hosts and routers, links, routes
  for (const Host& h : all) {
    char speed[64];
    std::snprintf(speed, sizeof speed, "%.17gf", h.speed_flops);
    host_lines += "<host id=\"" + h.name + "\" speed=\"" + speed + "\" core=\"" + std::to_string(h.cores) + "\"/>\n";
    link_lines +=
        "<link id=\"l-" + h.name + "\" bandwidth=\"1.25GBps\" latency=\"10us\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    route_lines +=
        "<route src=\"" + h.name + "\" dst=\"sw\"><link_ctn id=\"l-" + h.name + "\" direction=\"UP\"/></route>\n";
  }
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/platform.xml";
  std::ofstream(path) << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Floyd\">\n"
                      << host_lines << "<router id=\"sw\"/>\n"
                      << link_lines << route_lines << "</zone>\n</platform>\n";
  return path;
}

// A static platform, and each worker's true compute rate on it.
struct Platform {
  const char* name;
  std::vector<Host> hosts;
  std::vector<std::string> placement;  // worker k's host (empty: a star of four_worker_scenario's nodes)
  std::vector<int> star_cores;
  std::vector<double> true_flops;
};
void PrintTo(const Platform& p, std::ostream* os) { *os << p.name; }

// four_worker_scenario's workload on `p`, with `policy` over 300 steps.
scenarios::Scenario scenario_on(const Platform& p, const std::string& policy, const std::string& dir) {
  auto s = four_worker_scenario(p.star_cores.empty() ? std::vector<int>(p.placement.size(), 1) : p.star_cores, policy);
  s.workload.dataset_samples = 128 * 300;  // 300 steps: the first decision's 5 uniform steps are amortised
  if (p.placement.empty()) return s;
  s.cluster.topology = scenarios::Topology::kPlatformFile;
  s.cluster.platform.path = write_platform(p.hosts, dir);
  s.cluster.platform.hosts = p.placement;
  s.cluster.platform.parameter_server = "ps";
  for (std::size_t k = 0; k < p.placement.size(); ++k) {
    for (const Host& h : p.hosts) {
      if (h.name == p.placement[k]) s.cluster.workers[k].speed_flops = h.speed_flops;
    }
  }
  return s;
}

// The batches of the run's first plan (the oracle's: it decides at once).
std::vector<long> initial_batches(const std::string& dir) {
  std::vector<long> out;
  for (const auto& r : read_csv(dir + "/plans.csv")) {
    if (r.at("reason") != "initial") continue;
    out.push_back(std::stol(r.at("batch")));
  }
  return out;
}

// Workers 0 and 1 share a 20 Gflop/s single-core host (10 Gflop/s each), worker 2 has 10 Gflop/s and worker 3
// 20 Gflop/s to itself.
const Platform kSharedHost{
    "SharedHost", {{"a", 20e9, 1}, {"b", 10e9, 1}, {"c", 20e9, 1}}, {"a", "a", "b", "c"}, {}, {10e9, 10e9, 10e9, 20e9}};
// Workers 0..2 share a two-core host of 10 Gflop/s cores (two thirds of a core each), worker 3 has a core to itself,
// workers 4 and 5 a core each of a four-core host.
const Platform kMultiCoreHost{"MultiCoreHost",
                              {{"m", 10e9, 2}, {"b", 10e9, 1}, {"q", 10e9, 4}},
                              {"m", "m", "m", "b", "q", "q"},
                              {},
                              {10e9 / 1.5, 10e9 / 1.5, 10e9 / 1.5, 10e9, 10e9, 10e9}};
const Platform kStar{"Star", {}, {}, {8, 12, 16, 28}, {80e9, 120e9, 160e9, 280e9}};

class StaticPlatform : public ::testing::TestWithParam<Platform> {};

TEST_P(StaticPlatform, TheOracleIsNeverBeatenAndPlansByTheTrueRates) {
  const Platform& p = GetParam();
  std::map<std::string, double> total;
  std::map<std::string, std::string> dirs;
  for (const char* policy : {"uniform", "omnilearn", "oracle"}) {
    dirs[policy] = test_dir(policy);
    const auto s = scenario_on(p, policy, test_dir(std::string(policy) + "-platform"));
    ASSERT_EQ(run_in_child(s, dirs[policy]), "") << policy;
    total[policy] = summary_number(dirs[policy], "total_time_s");
  }
  std::printf("%s: uniform %.3f s, omnilearn %.3f s, oracle %.3f s\n", p.name, total["uniform"], total["omnilearn"],
              total["oracle"]);
  EXPECT_LE(total["oracle"], total["omnilearn"] * (1.0 + 1e-9));
  EXPECT_LE(total["oracle"], total["uniform"] * (1.0 + 1e-9));
  // The equal-time split of B = 128 by the true rates (the fixed flop per step are under a tenth of a sample).
  const std::vector<long> batch = initial_batches(dirs["oracle"]);
  ASSERT_EQ(batch.size(), p.true_flops.size());
  const double sum = std::accumulate(p.true_flops.begin(), p.true_flops.end(), 0.0);
  for (std::size_t k = 0; k < batch.size(); ++k) {
    EXPECT_NEAR(static_cast<double>(batch[k]), 128.0 * p.true_flops[k] / sum, 1.0) << "worker " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Oracle, StaticPlatform, ::testing::Values(kStar, kSharedHost, kMultiCoreHost),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(SharedHost, TimedAvailabilityOnASharedHostIsRefused) {
  auto s = scenario_on(kSharedHost, "uniform", test_dir("platform"));
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {testing::phase(0, {1, 1, 1, 1}), testing::phase(3, {0.5, 0.5, 1, 1})};
  const std::string error = run_in_child(s, test_dir("run"));
  EXPECT_NE(error.find("workers 0 and 1 share host 'a'"), std::string::npos) << error;
  // One of them changing runs.
  s.availability.phases = {testing::phase(0, {1, 1, 1, 1}), testing::phase(3, {1, 0.5, 1, 1})};
  EXPECT_EQ(run_in_child(s, test_dir("one")), "");
}

}  // namespace
}  // namespace omnilearn::sim
