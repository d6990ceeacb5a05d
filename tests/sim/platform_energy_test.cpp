// Energy the scenario does not spell out (docs/energy.md): a platform file's own power figures (hosts'
// wattage_per_state and wattage_off, links' wattage_range), and energy.objective's frequency choice applied to the
// simulated steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "omnilearn/scenarios/scenario_parser.h"
#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

// Two workers a (pstate 1 of two: 500 Mflop/s, 5 W idle, 50 W busy, 1 W off) and b (1 Gflop/s, 20 W idle, 200 W with
// all cores: epsilon unused), a server `ps`; a split-duplex link from a (2 W idle, 4 W busy) and a shared one from b
// (3 W, 5 W), both 1 GB/s, to one switch.
std::string write_platform(const std::string& dir, const std::string& b_wattage = "20:30:200",
                           const std::string& la_range = "2:4") {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/watts.xml";
  std::ofstream(path) << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Floyd">
    <host id="a" speed="1Gf,500Mf" pstate="1">
      <prop id="wattage_per_state" value="10:100, 5:50"/>
      <prop id="wattage_off" value="1"/>
    </host>
    <host id="b" speed="1Gf"><prop id="wattage_per_state" value=")"
                      << b_wattage << R"("/></host>
    <host id="ps" speed="1Gf"/>
    <router id="switch"/>
    <link id="la" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX">
      <prop id="wattage_range" value=")"
                      << la_range << R"("/>
    </link>
    <link id="lb" bandwidth="1GBps" latency="1us"><prop id="wattage_range" value="3:5"/></link>
    <link id="lps" bandwidth="1GBps" latency="1us"/>
    <route src="a" dst="switch"><link_ctn id="la" direction="UP"/></route>
    <route src="b" dst="switch"><link_ctn id="lb"/></route>
    <route src="ps" dst="switch"><link_ctn id="lps"/></route>
  </zone>
</platform>
)";
  return path;
}

scenarios::Scenario platform_scenario(const std::string& platform, const std::string& energy = "{wait: idle}") {
  auto s = scenarios::parse_scenario(
      "seed: 1\nmode: bsp\ncluster: {platform: {file: " + platform +
          ", parameter_server: ps}}\n"
          "workload: {model: resnet18, dataset: cifar10, dataset_samples: 512, global_batch: 64, epochs: 1}\n"
          "policy: {name: uniform}\nenergy: " +
          energy + "\n",
      "platform-energy.yaml");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

double number(const testing::CsvRow& row, const std::string& key) { return std::stod(row.at(key)); }

// Each worker is charged its host's figures at its power state: busy while computing and communicating, idle while
// waiting and outside its iterations.
TEST(PlatformEnergy, HostsBringTheirOwnWattage) {
  const std::string dir = testing::test_dir("run");
  ASSERT_EQ(testing::run_in_child(platform_scenario(write_platform(testing::test_dir("platform"))), dir), "");
  const auto rows = testing::read_csv(dir + "/energy.csv");
  ASSERT_EQ(rows.size(), 2u);
  const double idle[] = {5.0, 20.0}, busy[] = {50.0, 200.0};
  double total = 0.0;
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& r = rows[k];
    const double expected = busy[k] * (number(r, "compute_s") + number(r, "comm_s")) +
                            idle[k] * (number(r, "wait_s") + number(r, "idle_s"));
    EXPECT_GT(number(r, "compute_s"), 0.0);
    EXPECT_NEAR(number(r, "joules"), expected, 1e-9 * expected) << "worker " << k;
    EXPECT_NEAR(number(r, "compute_j"), busy[k] * number(r, "compute_s"), 1e-9 * number(r, "compute_j"));
    total += expected;
  }
  EXPECT_NEAR(testing::summary_number(dir, "joules"), total, 1e-9 * total);
}

// The section's fields still replace the file's (per core: these hosts have one).
TEST(PlatformEnergy, TheEnergySectionOverridesTheFile) {
  const std::string dir = testing::test_dir("run");
  ASSERT_EQ(testing::run_in_child(
                platform_scenario(write_platform(testing::test_dir("platform")), "{wait: idle, cpu: {busy: 7}}"), dir),
            "");
  const auto rows = testing::read_csv(dir + "/energy.csv");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) EXPECT_NEAR(number(r, "compute_j"), 7.0 * number(r, "compute_s"), 1e-6);
}

TEST(PlatformEnergy, AMalformedPropertyNamesTheHostAndTheProperty) {
  const std::string dir = testing::test_dir("run");
  const std::string error = testing::run_in_child(
      platform_scenario(write_platform(testing::test_dir("platform"), "20:lots"), "{wait: idle}"), dir);
  EXPECT_NE(error.find("host 'b'"), std::string::npos) << error;
  EXPECT_NE(error.find("wattage_per_state '20:lots'"), std::string::npos) << error;
}

TEST(PlatformEnergy, AMalformedLinkPropertyNamesTheLink) {
  const std::string dir = testing::test_dir("run");
  const std::string error = testing::run_in_child(
      platform_scenario(write_platform(testing::test_dir("platform"), "20:30:200", "2")), dir);
  EXPECT_NE(error.find("link 'la': property wattage_range '2' is not idle:busy"), std::string::npos) << error;
}

// links_j: every link's idle power over the run, plus (busy - idle) x bytes / bandwidth. Each step's two-worker ring
// sends the gradient G each way: a -> b over la (up) and lb, b -> a over lb and la (down), so la and lb each carry
// 2G a step: 5 W x T + (2 + 2) W x 2G x steps / 1 GB/s.
TEST(PlatformEnergy, LinksAreChargedIdleOverTheRunAndBusyForTheirBytes) {
  const std::string dir = testing::test_dir("run");
  const scenarios::Scenario s = platform_scenario(write_platform(testing::test_dir("platform")));
  ASSERT_EQ(testing::run_in_child(s, dir), "");
  const double g =
      s.workload.model.gradient_bytes > 0.0 ? s.workload.model.gradient_bytes : 4.0 * s.workload.model.parameters;
  const double t = testing::summary_number(dir, "total_time_s"), steps = testing::summary_number(dir, "iterations");
  ASSERT_GT(steps, 0.0);
  const double expected = 5.0 * t + 4.0 * 2.0 * g * steps / 1e9;
  EXPECT_NEAR(testing::summary_number(dir, "links_j"), expected, 1e-9 * expected);
}

// ASP: each iteration's push (a -> ps over la up, b -> ps over lb) and its reply with the parameters (back) carry G
// each over the worker's link: 5 W x T + 2 W x 2G x iterations / 1 GB/s (both links' busy - idle is 2 W).
TEST(PlatformEnergy, AspPushesAndPullsChargeTheWorkersLinks) {
  const std::string dir = testing::test_dir("run");
  scenarios::Scenario s = platform_scenario(write_platform(testing::test_dir("platform")));
  s.mode = controller::TrainingMode::kAsp;
  ASSERT_EQ(testing::run_in_child(s, dir), "");
  const double g = static_cast<double>(static_cast<std::uint64_t>(
      s.workload.model.gradient_bytes > 0.0 ? s.workload.model.gradient_bytes : 4.0 * s.workload.model.parameters));
  const double rows = static_cast<double>(testing::read_csv(dir + "/iterations.csv").size());
  ASSERT_GT(rows, 0.0);
  const double t = testing::summary_number(dir, "total_time_s");
  const double expected = 5.0 * t + 2.0 * 2.0 * g * rows / 1e9;
  EXPECT_NEAR(testing::summary_number(dir, "links_j"), expected, 1e-9 * expected);
}

// Without a link's figures the block has no links_j.
TEST(PlatformEnergy, NoLinkFiguresNoLinksField) {
  const std::string dir = testing::test_dir("run");
  auto s = scenarios::load_scenario(std::string(OMNILEARN_SOURCE_DIR) + "/scenarios/network/four-hosts.yaml",
                                    {"energy.cpu.idle=1", "energy.cpu.busy=2"});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_EQ(testing::run_in_child(*s, dir), "");
  EXPECT_GT(testing::summary_number(dir, "joules"), 0.0);
  EXPECT_EQ(testing::read_text(dir + "/summary.json").find("links_j"), std::string::npos);
}

// The largest compute time of each step, by step, from iterations.csv.
std::map<std::string, double> slowest_by_step(const std::string& dir) {
  std::map<std::string, double> out;
  for (const auto& r : testing::read_csv(dir + "/iterations.csv")) {
    out[r.at("step")] = std::max(out[r.at("step")], number(r, "compute_s"));
  }
  return out;
}

// energy.objective time_within 10 with no idle or waiting power: slowing only saves, so every step's compute phase
// lasts 1.1 x its slowest computation at full speed; the run is longer and uses less energy. The controller sees
// the full-speed times, so its plans are the same. Coordinator mode gives the same rows.
TEST(PlatformEnergy, TheObjectiveStretchesEachStepWithinItsBound) {
  scenarios::Scenario s = testing::four_worker_scenario({6, 6, 4, 32}, "omnilearn");
  s.energy.emplace();
  s.energy->wait = {scenarios::PhasePowerMode::kIdle, 0.0};
  s.energy->cpu.idle_w = 0.0, s.energy->cpu.busy_w = 1.0;
  const std::string plain = testing::test_dir("plain");
  ASSERT_EQ(testing::run_in_child(s, plain), "");
  s.energy->objective = scenarios::EnergyObjective{scenarios::EnergyObjective::Kind::kTimeWithin, 10.0};
  const std::string slowed = testing::test_dir("slowed");
  ASSERT_EQ(testing::run_in_child(s, slowed), "");
  const auto before = slowest_by_step(plain), after = slowest_by_step(slowed);
  ASSERT_EQ(before.size(), after.size());
  ASSERT_GT(before.size(), 10u);
  for (const auto& [step, t] : before) EXPECT_NEAR(after.at(step), 1.1 * t, 1e-9 * t) << "step " << step;
  EXPECT_GT(testing::summary_number(slowed, "total_time_s"), testing::summary_number(plain, "total_time_s"));
  EXPECT_LT(testing::summary_number(slowed, "joules"), testing::summary_number(plain, "joules"));
  const auto plain_rows = testing::read_csv(plain + "/iterations.csv");
  const auto slowed_rows = testing::read_csv(slowed + "/iterations.csv");
  ASSERT_EQ(plain_rows.size(), slowed_rows.size());
  for (std::size_t i = 0; i < plain_rows.size(); ++i) EXPECT_EQ(plain_rows[i].at("batch"), slowed_rows[i].at("batch"));
  SimOptions coordinator;
  coordinator.bsp_actors = SimOptions::BspActors::kCoordinator;
  const std::string coordinated = testing::test_dir("coordinated");
  ASSERT_EQ(testing::run_in_child(s, coordinated, coordinator), "");
  EXPECT_EQ(testing::read_text(coordinated + "/iterations.csv"), testing::read_text(slowed + "/iterations.csv"));
}

// A host whose pstates are slower than its own is slowed into them: host a (1 Gflop/s in pstate 0, 500 Mflop/s in
// pstate 1 at 50 W busy) computes half as long as host b (500 Mflop/s), so slow_with_slack puts it in pstate 1, which
// ends with b: 2 x its time at 50 W (100 W-units) against its time at 100 W plus as long waiting at 10 W. The source
// says platform pstates (b's, the law: it is the slowest and never slows); no law is used, so no alpha band.
TEST(PlatformEnergy, SlowerPstatesAreSlowingStates) {
  const std::string dir = testing::test_dir("pstates");
  std::filesystem::create_directories(dir);
  const std::string platform = dir + "/pstates.xml";
  std::ofstream(platform) << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Floyd">
    <host id="a" speed="1Gf,500Mf" pstate="0"><prop id="wattage_per_state" value="10:100, 5:50"/></host>
    <host id="b" speed="500Mf"><prop id="wattage_per_state" value="10:100"/></host>
    <host id="ps" speed="1Gf"/>
    <router id="switch"/>
    <link id="la" bandwidth="1GBps" latency="1us"/>
    <link id="lb" bandwidth="1GBps" latency="1us"/>
    <link id="lps" bandwidth="1GBps" latency="1us"/>
    <route src="a" dst="switch"><link_ctn id="la"/></route>
    <route src="b" dst="switch"><link_ctn id="lb"/></route>
    <route src="ps" dst="switch"><link_ctn id="lps"/></route>
  </zone>
</platform>
)";
  const std::string out = dir + "/run";
  ASSERT_EQ(testing::run_in_child(platform_scenario(platform, "{wait: idle, slow_with_slack: true}"), out), "");
  const std::string summary = testing::read_text(out + "/summary.json");
  EXPECT_NE(summary.find("platform pstates (host 'a'"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("\"alpha_band\""), std::string::npos);  // b, under the law, is never slowed
  const auto rows = testing::read_csv(out + "/energy.csv");
  ASSERT_EQ(rows.size(), 2u);
  // Worker a computes in pstate 1 throughout: its compute joules are 50 W x its compute seconds.
  EXPECT_NEAR(number(rows[0], "compute_j"), 50.0 * number(rows[0], "compute_s"), 1e-6 * number(rows[0], "compute_j"));
  EXPECT_GT(number(rows[0], "compute_s"), 0.0);
}

// slowing_decision previous with uniform batches and no noise: step 0 runs at full speed (nothing measured yet); from
// step 1 the workers with slack compute slower, in the law's 5% states, decided on step 0's times. A worker pays the
// switch cost once, in the step its state changes: step 1's computation is the later steps' plus 0.01 s. Without
// noise the only time lost against the oracle's choice is those switches.
TEST(PlatformEnergy, PreviousDecisionPaysEachSwitchOnce) {
  scenarios::Scenario s = testing::four_worker_scenario({6, 6, 4, 32}, "uniform");
  s.energy.emplace();
  s.energy->wait = {scenarios::PhasePowerMode::kIdle, 0.0};
  s.energy->cpu.idle_w = 0.5, s.energy->cpu.busy_w = 2.0;
  s.energy->slow_with_slack = true;
  const std::string oracle = testing::test_dir("oracle");
  ASSERT_EQ(testing::run_in_child(s, oracle), "");
  s.energy->slowing_decision = scenarios::SlowingDecision::kPrevious;
  const std::string previous = testing::test_dir("previous");
  ASSERT_EQ(testing::run_in_child(s, previous), "");
  std::map<std::string, std::map<std::string, double>> compute;  // worker -> step -> compute_s
  for (const auto& r : testing::read_csv(previous + "/iterations.csv")) compute[r.at("worker")][r.at("step")] = number(r, "compute_s");
  const auto plain = testing::read_csv(oracle + "/iterations.csv");
  std::map<std::string, std::map<std::string, double>> full;
  for (const auto& r : plain) full[r.at("worker")][r.at("step")] = number(r, "compute_s");
  int slowed = 0;
  for (const auto& [worker, steps] : compute) {
    ASSERT_GT(steps.size(), 3u);
    EXPECT_DOUBLE_EQ(steps.at("0"), full.at(worker).at("0")) << "worker " << worker;
    if (steps.at("2") > full.at(worker).at("2") * (1.0 + 1e-9)) {
      ++slowed;
      EXPECT_NEAR(steps.at("1") - steps.at("2"), 0.01, 1e-9) << "worker " << worker;
      for (const auto& [step, t] : steps) {
        // (A step at another batch, the epoch's last, computes another time.)
        if (step == "0" || step == "1" || full.at(worker).at(step) != full.at(worker).at("2")) continue;
        EXPECT_NEAR(t, steps.at("2"), 1e-9 * t) << "worker " << worker << " step " << step;
      }
    }
  }
  EXPECT_EQ(slowed, 3);  // all but the slowest
  EXPECT_DOUBLE_EQ(testing::summary_number(previous, "slowing_switches"), 3.0);
  EXPECT_NEAR(testing::summary_number(previous, "slowing_switch_s"), 0.03, 1e-12);
  const double lost = testing::summary_number(previous, "slowing_misprediction_s");
  EXPECT_GE(lost, 0.0);
  EXPECT_LE(lost, 0.01 + 1e-9);  // the switches of step 1 overlap: at most one switch's time
  EXPECT_LT(testing::summary_number(previous, "joules"),
            testing::summary_number(oracle, "joules") * 1.05);  // it keeps most of the saving
}

}  // namespace
}  // namespace omnilearn::sim
