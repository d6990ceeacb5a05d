// Energy in the multi-job simulator (docs/energy.md, "Several jobs"), hand-computed: the meter alone (a step's
// phases, held time in no step at idle, packed halves, unallocated devices), then whole runs: one job alone for t
// seconds at a known busy power costs P x t, an unallocated device idle x makespan, the barrier's wait at the
// `wait` setting, two packed jobs half each, jobs + unallocated = total, and the same bytes twice. Each run forks.
#include "omnilearn/sim/cluster_energy.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cluster_test_support.h"
#include "omnilearn/scenarios/cluster_preset.h"
#include "omnilearn/sim/cluster_simulation.h"

namespace omnilearn::sim {
namespace {

using testing::cell;
using testing::read_csv;
using testing::read_text;
using testing::summary_number;
using testing::test_dir;

// "fast": 10 W idle, 100 W busy; "slow": 5 W idle, 40 W busy (flat in the batch).
ClusterEnergyOptions figures(scenarios::PhasePowerMode wait = scenarios::PhasePowerMode::kAuto) {
  ClusterEnergyOptions o;
  o.wait.mode = wait;
  o.power["fast"].idle_w = 10.0;
  o.power["fast"].busy_w = 100.0;
  o.power["slow"].idle_w = 5.0;
  o.power["slow"].busy_w = 40.0;
  return o;
}

TEST(ClusterEnergyMeter, ChargesTheStepsPhasesAndHeldTimeOutsideThemAtIdle) {
  ClusterEnergyMeter meter(figures(scenarios::PhasePowerMode::kIdle), 1);
  // Two workers (fast, slow): 1 s and 2 s of compute, the fast one waits 1 s at idle, both communicate 0.5 s busy.
  meter.step(0, {"fast", "slow"}, {32, 32}, {1.0, 2.0}, {1.0, 0.0}, 0.5, 1.0);
  meter.repeat_last(0, 1.5);         // one and a half more
  meter.held(0, "fast", 10.0, 1.0);  // 2.5 steps of 2.5 s: 6.25 s in steps, 3.75 s at idle
  meter.held(0, "slow", 10.0, 1.0);
  const ClusterEnergy e = meter.summary({{"fast", 1}, {"slow", 2}}, 10.0);
  ASSERT_EQ(e.jobs.size(), 1u);
  EXPECT_NEAR(e.jobs[0].compute_j, 2.5 * (100.0 * 1.0 + 40.0 * 2.0), 1e-9);
  EXPECT_NEAR(e.jobs[0].wait_j, 2.5 * 10.0 * 1.0, 1e-9);
  EXPECT_NEAR(e.jobs[0].comm_j, 2.5 * 0.5 * (100.0 + 40.0), 1e-9);
  EXPECT_NEAR(e.jobs[0].idle_j, 3.75 * 10.0 + 3.75 * 5.0, 1e-9);
  // The second slow device is never held: 10 s at 5 W.
  EXPECT_NEAR(e.kinds.at("slow").unallocated_device_s, 10.0, 1e-9);
  EXPECT_NEAR(e.unallocated_idle_j, 50.0, 1e-9);
  EXPECT_NEAR(e.total_j, e.jobs[0].joules() + 50.0, 1e-9);
  EXPECT_NEAR(e.kinds.at("fast").jobs_j + e.kinds.at("slow").jobs_j, e.jobs_j, 1e-9);
  EXPECT_NEAR(e.average_power_w, e.total_j / 10.0, 1e-9);
  EXPECT_EQ(e.wait, "idle");
  EXPECT_EQ(e.comm, "busy");
}

TEST(ClusterEnergyMeter, TwoJobsPackedOnOneDeviceEachPayHalf) {
  ClusterEnergyMeter meter(figures(), 2);
  for (std::size_t j = 0; j < 2; ++j) {
    meter.busy(j, {"fast"}, {32}, 4.0, 0.5);
    meter.held(j, "fast", 4.0, 0.5);
  }
  const ClusterEnergy e = meter.summary({{"fast", 1}}, 4.0);
  EXPECT_NEAR(e.jobs[0].joules(), 200.0, 1e-9);  // 100 W x 4 s, halved
  EXPECT_NEAR(e.jobs[1].joules(), 200.0, 1e-9);
  EXPECT_NEAR(e.unallocated_idle_j, 0.0, 1e-9);  // the two halves make the whole device
  EXPECT_NEAR(e.total_j, 400.0, 1e-9);
}

TEST(ClusterEnergyMeter, AutoDrawsTheBlockedFigureWhereAKindHasOneAndTheSourcesSaySo) {
  // "fast" has a blocked figure (as a kind read from the measured table): auto waiting and communication draw it;
  // "slow" has none: busy (a GPU polling in NCCL).
  ClusterEnergyOptions o = figures(scenarios::PhasePowerMode::kAuto);
  o.comm.mode = scenarios::PhasePowerMode::kAuto;
  o.power["fast"].blocked_w = 20.0;
  o.power["fast"].busy_from = "measured table (fast)";
  o.power["fast"].idle_from = "assumed law (idle)";
  o.power["fast"].blocked_from = "measured table (upper bound of idle)";
  o.power["slow"].busy_from = "assumed law (scaled)";
  o.power["slow"].idle_from = "preset (cited)";
  ClusterEnergyMeter meter(o, 1);
  meter.step(0, {"fast", "slow"}, {32, 32}, {1.0, 2.0}, {1.0, 0.0}, 0.5, 1.0);
  const ClusterEnergy e = meter.summary({{"fast", 1}, {"slow", 1}}, 2.5);
  EXPECT_NEAR(e.jobs[0].wait_j, 1.0 * 20.0, 1e-9);
  EXPECT_NEAR(e.jobs[0].comm_j, 0.5 * (20.0 + 40.0), 1e-9);
  ASSERT_EQ(e.sources.size(), 4u);
  EXPECT_EQ(e.sources[0].first, "busy");
  EXPECT_EQ(e.sources[0].second, "fast: measured table (fast) | slow: assumed law (scaled)");
  EXPECT_EQ(e.sources[1].second, "fast: assumed law (idle) | slow: preset (cited)");
  EXPECT_EQ(e.sources[2].second,
            "fast: blocked: measured table (upper bound of idle) | slow: busy: assumed law (scaled); a GPU polling in "
            "NCCL, assumed");
  EXPECT_EQ(e.sources[3].first, "comm");
}

TEST(ClusterEnergyMeter, RefusesAKindWithoutFigures) {
  ClusterEnergyOptions o = figures();
  EXPECT_TRUE(check_cluster_energy(o, {"fast", "slow"}).is_ok());
  const Status st = check_cluster_energy(o, {"fast", "h100"});
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("'h100'"), std::string::npos) << st.message();
  o.power["fast"].busy_w.reset();
  EXPECT_FALSE(check_cluster_energy(o, {"fast"}).is_ok());
}

TEST(DeviceKindPower, EveryShippedKindHasFiguresAndTheV100IsZeusCurve) {
  for (const char* kind : {"k80", "p100", "v100", "t4", "a100", "rtx2080ti"}) {
    const auto p = scenarios::device_kind_power(kind);
    ASSERT_TRUE(p.has_value()) << kind;
    ASSERT_TRUE(p->idle_w.has_value()) << kind;
    const double tdp = scenarios::device_kind_tdp_w(kind).value();
    // Busy rises with the batch, above idle and below the board power.
    EXPECT_GT(p->busy_at(8), *p->idle_w) << kind;
    EXPECT_GT(p->busy_at(1024), p->busy_at(64)) << kind;
    EXPECT_LT(p->busy_at(1e6), tdp) << kind;
    EXPECT_FALSE(p->source.empty()) << kind;
  }
  const auto v100 = scenarios::device_kind_power("v100").value();
  EXPECT_DOUBLE_EQ(v100.busy_at(8), 39.0);
  EXPECT_DOUBLE_EQ(v100.busy_at(1024), 188.0);
  // The T4 (70 W, idle 7 W): 7 + (188 - 25) / 275 x 63 at batch 1024.
  EXPECT_NEAR(scenarios::device_kind_power("t4")->busy_at(1024), 7.0 + 163.0 / 275.0 * 63.0, 1e-9);
  EXPECT_FALSE(scenarios::device_kind_power("h100").has_value());
}

// Runs `jobs` on `c` with figures(wait) (and packing's table when given); the child's error, empty on success.
std::string run_with_energy(const std::vector<traces::JobSpec>& jobs, const scenarios::DeviceCluster& c,
                            const std::string& dir, scenarios::PhasePowerMode wait = scenarios::PhasePowerMode::kAuto,
                            const traces::PackedSpeedTable* packed = nullptr) {
  ClusterSimOptions options;
  options.energy = figures(wait);
  if (packed != nullptr) {
    options.scheduling.packing = true;
    options.packed_speeds = packed;
  }
  return testing::run_jobs(jobs, c, options, dir);
}

TEST(ClusterEnergy, OneJobAloneCostsBusyPowerTimesItsTimeAndTheFreeDeviceIdleTimesTheMakespan) {
  // 3200 samples at 320 samples/s: 10 s on one of two fast devices; the other idles those 10 s.
  const std::string dir = test_dir("energy-alone");
  ASSERT_EQ(run_with_energy({testing::job("a", 0.0, 1, 3200, 64)}, testing::cluster(1, 2), dir), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  EXPECT_NEAR(cell(rows, "a", "end_s"), 10.0, 1e-9);
  EXPECT_NEAR(cell(rows, "a", "energy_j"), 100.0 * 10.0, 1e-6);
  EXPECT_NEAR(cell(rows, "a", "compute_j"), 1000.0, 1e-6);
  EXPECT_NEAR(cell(rows, "a", "idle_j"), 0.0, 1e-9);
  EXPECT_NEAR(summary_number(dir, "unallocated_idle_j"), 10.0 * 10.0, 1e-6);
  EXPECT_NEAR(summary_number(dir, "total_j"), 1100.0, 1e-6);
  EXPECT_NEAR(summary_number(dir, "average_power_w"), 110.0, 1e-6);
}

TEST(ClusterEnergy, TheFastWorkerWaitsAtTheWaitSetting) {
  // Two workers at 32 each: the fast one computes 0.1 s, the slow one 0.2 s, for 6400 / 64 = 100 steps; the fast
  // one waits 0.1 s a step. Communication is the rest of the job's time, both devices busy.
  scenarios::DeviceCluster c = testing::cluster(1, 1);
  c.groups.push_back(testing::group("slow", 1, 1));
  const std::vector<traces::JobSpec> jobs = {testing::job("j", 0.0, 2, 6400, 64)};
  std::map<scenarios::PhasePowerMode, double> wait_j;
  for (const auto mode : {scenarios::PhasePowerMode::kIdle, scenarios::PhasePowerMode::kBusy}) {
    const std::string dir =
        test_dir(mode == scenarios::PhasePowerMode::kIdle ? "energy-wait-idle" : "energy-wait-busy");
    ASSERT_EQ(run_with_energy(jobs, c, dir, mode), "");
    const auto rows = read_csv(dir + "/jobs.csv");
    const double comm_s = cell(rows, "j", "end_s") - 100 * 0.2;
    EXPECT_NEAR(cell(rows, "j", "compute_j"), 100 * (0.1 * 100.0 + 0.2 * 40.0), 1e-6);
    EXPECT_NEAR(cell(rows, "j", "comm_j"), comm_s * (100.0 + 40.0), 1e-6);
    wait_j[mode] = cell(rows, "j", "wait_j");
    EXPECT_NEAR(cell(rows, "j", "energy_j"),
                cell(rows, "j", "compute_j") + cell(rows, "j", "comm_j") + wait_j[mode] + cell(rows, "j", "idle_j"),
                1e-6);
    EXPECT_NEAR(summary_number(dir, "total_j"),
                summary_number(dir, "jobs_j") + summary_number(dir, "unallocated_idle_j"), 1e-6);
  }
  EXPECT_NEAR(wait_j[scenarios::PhasePowerMode::kIdle], 100 * 0.1 * 10.0, 1e-6);
  EXPECT_NEAR(wait_j[scenarios::PhasePowerMode::kBusy], 100 * 0.1 * 100.0, 1e-6);
}

TEST(ClusterEnergy, TwoPackedJobsEachPayHalfTheDevice) {
  // As ClusterPacking's first case: a (batch 32) keeps 0.75 and ends at 3200/240 s, b (batch 40) keeps 0.5 and ends
  // at 20 s, packed from 0 to the end. Each is charged half of 100 W; the device's other half after a leaves counts
  // as unallocated, at idle.
  const auto pairs =
      std::move(traces::PackedSpeedTable::create({{"fast", "resnet18", 32, "resnet18", 40, 0.75, 0.5}})).value();
  const std::vector<traces::JobSpec> jobs = {testing::job("a", 0.0, 1, 3200, 32), testing::job("b", 0.0, 1, 3200, 40)};
  const std::string dir = test_dir("energy-packed");
  ASSERT_EQ(run_with_energy(jobs, testing::cluster(1, 1), dir, scenarios::PhasePowerMode::kAuto, &pairs), "");
  const auto rows = read_csv(dir + "/jobs.csv");
  const double a_end = 3200.0 / 240.0;
  EXPECT_NEAR(cell(rows, "a", "energy_j"), 0.5 * 100.0 * a_end, 1e-6);
  EXPECT_NEAR(cell(rows, "b", "energy_j"), 0.5 * 100.0 * 20.0, 1e-6);
  EXPECT_NEAR(summary_number(dir, "unallocated_idle_j"), (20.0 - 0.5 * a_end - 0.5 * 20.0) * 10.0, 1e-6);
  EXPECT_NEAR(summary_number(dir, "total_j"), 0.5 * 100.0 * (a_end + 20.0) + (10.0 - 0.5 * a_end) * 10.0, 1e-6);
  // The same inputs give the same bytes.
  const std::string again = test_dir("energy-packed-again");
  ASSERT_EQ(run_with_energy(jobs, testing::cluster(1, 1), again, scenarios::PhasePowerMode::kAuto, &pairs), "");
  EXPECT_EQ(read_text(dir + "/jobs.csv"), read_text(again + "/jobs.csv"));
  EXPECT_EQ(read_text(dir + "/summary.json"), read_text(again + "/summary.json"));
}

TEST(ClusterEnergy, WithoutEnergyTheOutputsHaveNoEnergy) {
  const std::string dir = test_dir("energy-off");
  ASSERT_EQ(testing::run_jobs({testing::job("a", 0.0, 1, 3200, 64)}, testing::cluster(1, 2), ClusterSimOptions{}, dir),
            "");
  const std::string jobs = read_text(dir + "/jobs.csv");
  EXPECT_EQ(jobs.substr(0, jobs.find('\n')).find("energy"), std::string::npos);
  EXPECT_EQ(read_text(dir + "/summary.json").find("energy"), std::string::npos);
}

}  // namespace
}  // namespace omnilearn::sim
