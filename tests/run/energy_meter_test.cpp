#include "omnilearn/run/energy_meter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "omnilearn/run/jobs_run_setup.h"
#include "omnilearn/run/run_recorder.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "temp_dir.h"

namespace omnilearn::run {
namespace {

using scenarios::testing::read_file;
using scenarios::testing::TempDir;

IterationRecord row(WorkerId k, double start, double compute, double wait, double comm, BatchSize batch = 32) {
  IterationRecord r;
  r.worker = k, r.start_s = start, r.compute_s = compute, r.wait_s = wait, r.comm_s = comm, r.batch = batch;
  return r;
}

WorkerPower cpu(double cores, double idle, double busy, double off = 0.0) {
  scenarios::DevicePower d;
  d.idle_w = idle, d.busy_w = busy, d.off_w = off;
  return WorkerPower{d, cores, false, {}, {}, {}};
}

WorkerPower v100() {
  scenarios::DevicePower d;
  d.idle_w = 25.0;
  d.busy_by_batch = {{8.0, 39.0}, {1024.0, 188.0}};
  return WorkerPower{d, 1.0, true, {}, {}, {}};
}

scenarios::EnergySpec spec(scenarios::PhasePowerMode wait, double watts = 0.0) {
  scenarios::EnergySpec s;
  s.wait = {wait, watts};
  return s;
}

TEST(EnergyMeter, BusyForTSecondsAtKnownFiguresIsPTimesT) {
  EnergyMeter m(spec(scenarios::PhasePowerMode::kIdle), {cpu(4, 1.0, 3.0)});
  m.iteration(row(0, 0.0, 10.0, 0.0, 0.0));
  const EnergySummary s = m.summary(10.0, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(s.compute_j, 4 * 3.0 * 10.0);
  EXPECT_DOUBLE_EQ(s.joules, 120.0);
  EXPECT_DOUBLE_EQ(s.average_power_w, 12.0);
  EXPECT_DOUBLE_EQ(s.idle_j, 0.0);
}

TEST(EnergyMeter, WaitingUnderIdleBusyWattsAndAuto) {
  using M = scenarios::PhasePowerMode;
  const auto wait_j = [](scenarios::EnergySpec sp, WorkerPower p) {
    EnergyMeter m(sp, {p});
    m.iteration(row(0, 0.0, 1.0, 2.0, 0.0));
    return m.summary(3.0, std::nullopt, std::nullopt).wait_j;
  };
  EXPECT_DOUBLE_EQ(wait_j(spec(M::kIdle), cpu(2, 1.0, 3.0)), 2 * 1.0 * 2.0);
  EXPECT_DOUBLE_EQ(wait_j(spec(M::kBusy), cpu(2, 1.0, 3.0)), 2 * 3.0 * 2.0);
  EXPECT_DOUBLE_EQ(wait_j(spec(M::kWatts, 5.0), cpu(2, 1.0, 3.0)), 2 * 5.0 * 2.0);
  EXPECT_DOUBLE_EQ(wait_j(spec(M::kAuto), cpu(2, 1.0, 3.0)), 2 * 1.0 * 2.0);  // a CPU sleeps
  // A GPU polls in NCCL: busy at the batch's power (32: 39 + (188 - 39) * 2 / 7).
  EXPECT_NEAR(wait_j(spec(M::kAuto), v100()), (39.0 + 149.0 * 2.0 / 7.0) * 2.0, 1e-9);
}

TEST(EnergyMeter, GpuBusyPowerFollowsTheBatchCurve) {
  const WorkerPower p = v100();
  EXPECT_DOUBLE_EQ(p.busy_w(8), 39.0);
  EXPECT_DOUBLE_EQ(p.busy_w(1024), 188.0);
  EXPECT_DOUBLE_EQ(p.busy_w(2), 39.0);     // flat outside
  EXPECT_DOUBLE_EQ(p.busy_w(4096), 188.0);
  EXPECT_NEAR(p.busy_w(128), 39.0 + 149.0 * 4.0 / 7.0, 1e-12);
}

TEST(EnergyMeter, ShareRuleChargesTheFractionAndOffPowerPiecewise) {
  // Busy 4 s; availability 0.5 from t = 1 to 3, down from 3 to 4 (off 0.5 W per core, 2 cores).
  EnergyMeter m(spec(scenarios::PhasePowerMode::kIdle), {cpu(2, 1.0, 3.0, 0.5)});
  m.availability(0, 0.5, 1.0);
  m.availability(0, 0.0, 3.0);
  m.iteration(row(0, 0.0, 4.0, 0.0, 0.0));
  m.availability(0, 1.0, 6.0);
  const EnergySummary s = m.summary(6.0, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(s.compute_j, 6.0 * 1.0 + 0.5 * 6.0 * 2.0 + 1.0 * 1.0);
  // After the iteration: down from 4 to 6 at off power, no idle seconds.
  EXPECT_DOUBLE_EQ(s.idle_j, 2.0 * 1.0);
  EXPECT_DOUBLE_EQ(s.workers[0].idle_s, 0.0);
}

TEST(EnergyMeter, ChangeInsideAnIterationSplitsEveryPhase) {
  EnergyMeter m(spec(scenarios::PhasePowerMode::kBusy), {cpu(1, 1.0, 2.0)});
  m.availability(0, 0.25, 1.5);  // inside the wait
  m.iteration(row(0, 0.0, 1.0, 1.0, 1.0));
  const EnergySummary s = m.summary(3.0, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(s.compute_j, 2.0);
  EXPECT_DOUBLE_EQ(s.wait_j, 0.5 * 2.0 + 0.5 * 0.25 * 2.0);
  EXPECT_DOUBLE_EQ(s.comm_j, 0.25 * 2.0);
}

TEST(EnergyMeter, EnergyToTargetAndPerAccuracyPoint) {
  EnergyMeter m(spec(scenarios::PhasePowerMode::kIdle), {cpu(1, 1.0, 2.0)});
  m.iteration(row(0, 0.0, 1.0, 0.0, 0.0));
  m.evaluation(1.0);
  m.iteration(row(0, 1.0, 1.0, 0.0, 0.0));
  m.evaluation(2.0);
  const EnergySummary s = m.summary(2.0, 1.0, 0.8);
  ASSERT_TRUE(s.energy_to_target_j.has_value());
  EXPECT_DOUBLE_EQ(*s.energy_to_target_j, 2.0);
  EXPECT_DOUBLE_EQ(*s.joules_per_accuracy_point, 4.0 / 80.0);
}

// Energy to target counts what the run's total counts up to the evaluation: the phases, idle time outside them, a
// down worker's off power, and the links; the last evaluation at the run's end is the total.
TEST(EnergyMeter, EnergyToTargetCountsIdleOffAndLinks) {
  // Worker 0 (2 W idle, 10 W busy) computes [0, 1) and [3, 4), idle between: evaluation at 4 s: 2 x 10 + 2 x 2 J.
  // Worker 1 (1 W idle, 5 W busy, 0.5 W off) computes [0, 1) then is down from 1 s: 5 + 3 x 0.5 J at 4 s.
  EnergyMeter m(spec(scenarios::PhasePowerMode::kIdle), {cpu(1, 2.0, 10.0), cpu(1, 1.0, 5.0, 0.5)});
  m.iteration(row(0, 0.0, 1.0, 0.0, 0.0));
  m.iteration(row(1, 0.0, 1.0, 0.0, 0.0));
  m.availability(1, 0.0, 1.0);
  EXPECT_DOUBLE_EQ(m.evaluation(1.0), 15.0);  // nothing idle or down yet
  m.iteration(row(0, 3.0, 1.0, 0.0, 0.0));
  EXPECT_DOUBLE_EQ(m.evaluation(4.0), 24.0 + 6.5);
  m.availability(1, 1.0, 5.0);
  const double last = m.evaluation(6.0);  // worker 1 back at 5 s, idle to 6; worker 0 idle 4-6
  const EnergySummary s = m.summary(6.0, 4.0, 0.9);
  ASSERT_TRUE(s.energy_to_target_j.has_value());
  EXPECT_DOUBLE_EQ(*s.energy_to_target_j, 30.5);
  EXPECT_DOUBLE_EQ(s.idle_j, 4 * 2.0 + 1 * 1.0 + 4 * 0.5);
  EXPECT_NEAR(last, s.joules, 1e-9 * s.joules);
  EXPECT_DOUBLE_EQ(last, (20.0 + 8.0) + (5.0 + 1.0 + 2.0));

  // Links with figures add their joules up to each evaluation (links_j beside `joules` at the end).
  EnergyMeter with_links(spec(scenarios::PhasePowerMode::kIdle), {cpu(1, 2.0, 10.0)});
  with_links.set_links([](Seconds t) { return 3.0 * t; });
  with_links.iteration(row(0, 0.0, 1.0, 0.0, 0.0));
  EXPECT_DOUBLE_EQ(with_links.evaluation(2.0), 10.0 + 2.0 + 6.0);
  EXPECT_DOUBLE_EQ(*with_links.summary(2.0, 2.0, std::nullopt).energy_to_target_j, 18.0);
}

TEST(EnergyMeter, SlowingLowersEnergyByTheComputedAmount) {
  using M = scenarios::PhasePowerMode;
  scenarios::EnergySpec plain = spec(M::kIdle), slowed = plain;
  slowed.slow_with_slack = true;
  const auto run = [](const scenarios::EnergySpec& sp) {
    EnergyMeter m(sp, {cpu(1, 1.0, 9.0)});
    m.iteration(row(0, 0.0, 3.0, 1.0, 0.0));  // f = 3 / 4
    return m.summary(4.0, std::nullopt, std::nullopt);
  };
  const EnergySummary a = run(plain), b = run(slowed);
  EXPECT_DOUBLE_EQ(a.joules, 3.0 * 9.0 + 1.0 * 1.0);
  const double f = 0.75, p = 1.0 + 8.0 * f * f * f;
  EXPECT_NEAR(b.joules, p * 4.0, 1e-12);  // computes over the whole step, no wait left
  EXPECT_NEAR(b.workers[0].wait_s, 0.0, 1e-12);
  EXPECT_NEAR(a.joules - b.joules, 28.0 - 4.0 * p, 1e-12);
  EXPECT_LT(b.joules, a.joules);
  // Under min_frequency the slowing stops there: f = 0.5 for 2 s of compute, then 2 s of wait.
  slowed.min_frequency = 0.5;
  EnergyMeter m(slowed, {cpu(1, 1.0, 9.0)});
  m.iteration(row(0, 0.0, 1.0, 3.0, 0.0));
  const EnergySummary c = m.summary(4.0, std::nullopt, std::nullopt);
  EXPECT_NEAR(c.compute_j, 2.0 * (1.0 + 8.0 * 0.125), 1e-12);
  EXPECT_NEAR(c.wait_j, 2.0, 1e-12);
}

scenarios::Scenario parse(const std::string& yaml) {
  auto s = scenarios::parse_scenario(yaml, "energy-test.yaml");
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? *s : scenarios::Scenario{};
}

const char* kExplicit = R"(
cluster:
  nodes:
    - {name: a, cores: 2, core_speed: 1e9}
workload: {model: resnet18, dataset: cifar10, global_batch: 32, epochs: 1}
)";

TEST(EnergyMeter, NoFiguresGivesTheReasonAndNoCsv) {
  const scenarios::Scenario s = parse(std::string(kExplicit) + "energy: {}\n");
  ASSERT_TRUE(s.energy.has_value());
  TempDir tmp;
  auto w = RunWriter::open((tmp.path() / "r").string(), "{}", false);
  ASSERT_TRUE(w.is_ok());
  RunRecorder rec(std::move(w).value(), RecorderOptions{true, false});
  rec.set_energy_meter(EnergyMeter::for_scenario(s));
  rec.iteration(row(0, 0.0, 1.0, 0.0, 0.0));
  RunSummary sum;
  sum.total_time_s = 1.0;
  rec.complete(sum);
  ASSERT_TRUE(rec.finish(sum).is_ok());
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "r" / "energy.csv"));
  const auto j = nlohmann::json::parse(read_file(tmp.path() / "r" / "summary.json"));
  EXPECT_EQ(j["energy"].size(), 1u);
  EXPECT_EQ(j["energy"]["reason"], "no power figures for worker 0 (a: no preset; give energy.cpu.idle and energy.cpu.busy)");
}

// evaluations.csv gains `joules` (the meter's evaluation()) when the run has energy; without it, the schema is as
// before.
TEST(EnergyMeter, EvaluationsCsvHasJoulesWithEnergyOnly) {
  const scenarios::Scenario s = parse(std::string(kExplicit) + "energy: {wait: idle, cpu: {idle: 1, busy: 2}}\n");
  TempDir tmp;
  for (const bool energy : {true, false}) {
    const std::string dir = (tmp.path() / (energy ? "e" : "n")).string();
    auto w = RunWriter::open(dir, "{}", false);
    ASSERT_TRUE(w.is_ok());
    RunRecorder rec(std::move(w).value(), RecorderOptions{true, false});
    if (energy) rec.set_energy_meter(EnergyMeter::for_scenario(s));
    rec.iteration(row(0, 0.0, 1.0, 0.0, 0.0));  // 2 cores x 2 W for 1 s
    rec.evaluation(EvaluationRecord{1.0, 0, 0, 0.5, 0.25});
    rec.evaluation(EvaluationRecord{3.0, 0, 0, 0.4, 0.5});  // + 2 cores x 1 W idle for 2 s
    RunSummary sum;
    sum.total_time_s = 3.0;
    rec.complete(sum);
    ASSERT_TRUE(rec.finish(sum).is_ok());
    const std::string csv = read_file(std::filesystem::path(dir) / "evaluations.csv");
    if (energy) {
      EXPECT_EQ(csv, "time_s,step,epoch,loss,accuracy,joules\n1,0,0,0.5,0.25,4\n3,0,0,0.4,0.5,8\n");
      EXPECT_DOUBLE_EQ(sum.energy->joules, 8.0);
    } else {
      EXPECT_EQ(csv, "time_s,step,epoch,loss,accuracy\n1,0,0,0.5,0.25\n3,0,0,0.4,0.5\n");
    }
  }
}

TEST(EnergyMeter, ExactBlockAndCsv) {
  const scenarios::Scenario s = parse(std::string(kExplicit) + "energy: {wait: busy, cpu: {idle: 1, busy: 2}}\n");
  TempDir tmp;
  auto w = RunWriter::open((tmp.path() / "r").string(), "{}", false);
  ASSERT_TRUE(w.is_ok());
  RunRecorder rec(std::move(w).value(), RecorderOptions{true, false});
  rec.set_energy_meter(EnergyMeter::for_scenario(s));
  rec.iteration(row(0, 0.0, 1.0, 0.5, 0.5));
  RunSummary sum;
  sum.total_time_s = 3.0;
  rec.complete(sum);
  ASSERT_TRUE(rec.finish(sum).is_ok());
  const auto j = nlohmann::ordered_json::parse(read_file(tmp.path() / "r" / "summary.json"));
  EXPECT_EQ(j["energy"].dump(),
            R"({"joules":10.0,"average_power_w":3.3333333333333335,"compute_j":4.0,"comm_j":2.0,"wait_j":2.0,)"
            R"("idle_j":2.0,"wait":"busy","slow_with_slack":false,"sources":{"busy":"scenario","idle":"scenario",)"
            R"("wait":"busy: scenario","comm":"busy: scenario"}})");
  EXPECT_EQ(read_file(tmp.path() / "r" / "energy.csv"),
            "worker,compute_j,comm_j,wait_j,idle_j,joules,compute_s,comm_s,wait_s,idle_s\n0,4,2,2,2,10,1,0.5,0.5,1\n");
}

TEST(EnergyMeter, PresetFiguresAndOverrides) {
  const scenarios::Scenario s = parse(R"(
cluster: {preset: hpc, workers: 2}
workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1}
energy: {gpu: {idle: 30}}
)");
  EnergyMeter m = EnergyMeter::for_scenario(s);
  ASSERT_TRUE(m.has_figures());
  m.iteration(row(0, 0.0, 1.0, 0.0, 0.0, 1024));
  m.iteration(row(1, 0.0, 1.0, 0.0, 0.0, 1024));
  const EnergySummary e = m.summary(1.0, std::nullopt, std::nullopt);
  // Zeus's rows at batch 1024, ShuffleNet-v2 / CIFAR-100 with Adadelta at 250 W (traces/devices/zeus-power.csv).
  EXPECT_NEAR(e.workers[0].compute_j, 187.68996594563717, 1e-9);
  EXPECT_NEAR(e.workers[1].compute_j, 136.5254058496581, 1e-9);
  const auto source = [&e](const std::string& field) {
    for (const auto& [f, label] : e.sources) {
      if (f == field) return label;
    }
    return std::string();
  };
  EXPECT_EQ(source("busy").rfind("measured table (v100 cifar100/shufflenetv2/adadelta, 250 W", 0), 0u)
      << source("busy");
  EXPECT_NE(source("busy").find(" | measured table (p100"), std::string::npos);
  EXPECT_EQ(source("idle"), "scenario");  // the section's 30 W
  EXPECT_EQ(source("wait").rfind("blocked: measured table (upper bound of idle: v100's lowest", 0), 0u);
}

// energy.gpu.table: busy at the worker's batch from the table, idle and waiting from the kind's lowest row (an
// upper bound), each labelled; a limit or batch bounds outside the measured ones refused, the field named.
const char* kGpuNode = R"(
cluster:
  nodes:
    - {name: g, cores: 1, speed: 1e14, gpu: true}
workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1}
policy: {name: uniform, min_batch: 16, max_batch: 128}
)";

TEST(EnergyMeter, GpuFiguresFromTheMeasuredTable) {
  const scenarios::Scenario s = parse(std::string(kGpuNode) +
                                      "energy: {gpu: {table: {kind: v100, workload: imagenet/resnet50/adadelta, "
                                      "power_limit: 250}}}\n");
  EnergyMeter m = EnergyMeter::for_scenario(s);
  ASSERT_TRUE(m.has_figures()) << m.summary(1.0, std::nullopt, std::nullopt).reason;
  m.iteration(row(0, 0.0, 1.0, 1.0, 0.0, 64));
  const EnergySummary e = m.summary(3.0, std::nullopt, std::nullopt);
  EXPECT_NEAR(e.compute_j, 222.8975265151672, 1e-9);  // v100, batch 64, 250 W
  EXPECT_NEAR(e.wait_j, 34.75158532315594, 1e-9);     // NCF / MovieLens-1M, batch 16384, 150 W: the lowest row
  EXPECT_NEAR(e.idle_j, 34.75158532315594, 1e-9);
  ASSERT_EQ(e.sources.size(), 4u);
  EXPECT_EQ(e.sources[1].second.rfind("measured table (upper bound of idle: v100's lowest measured power, "
                                      "movielens-1m/ncf/adam, batch 16384, 150 W",
                                      0),
            0u)
      << e.sources[1].second;

  const auto reason = [](const std::string& extra, const std::string& bounds = "min_batch: 16") {
    std::string yaml = kGpuNode;
    yaml.replace(yaml.find("min_batch: 16"), 13, bounds);
    EnergyMeter refused = EnergyMeter::for_scenario(parse(yaml + extra));
    return refused.summary(1.0, std::nullopt, std::nullopt).reason;
  };
  EXPECT_NE(reason("energy: {gpu: {table: {kind: v100, workload: imagenet/resnet50/adadelta, power_limit: 300}}}\n")
                .find("energy.gpu.table.power_limit"),
            std::string::npos);
  EXPECT_NE(reason("energy: {gpu: {table: {kind: h100, workload: imagenet/resnet50/adadelta, power_limit: 250}}}\n")
                .find("energy.gpu.table.kind"),
            std::string::npos);
  EXPECT_NE(reason("energy: {gpu: {table: {kind: v100, workload: imagenet/resnet50/adadelta, power_limit: 250}}}\n",
                   "min_batch: 4")
                .find("policy.min_batch"),
            std::string::npos);
}

// A GPU whose figures come from the measured table slows in the table's limits only: its states at batch 64 are the
// measured limits below 250 W, each the time ratio to 250 W and the measured power; slow_with_slack charges the
// least-energy one that fits the slack, no f^alpha, and the sources say so (no alpha band: no law was used).
TEST(EnergyMeter, GpuSlowingUsesTheMeasuredLimitsOnly) {
  scenarios::Scenario s = parse(std::string(kGpuNode) +
                                "energy: {wait: idle, slow_with_slack: true, gpu: {table: {kind: v100, workload: "
                                "imagenet/resnet50/adadelta, power_limit: 250}}}\n");
  auto table = traces::read_gpu_power_table(shipped_device_table("zeus-power.csv"));
  ASSERT_TRUE(table.is_ok()) << table.status().message();
  auto workers = worker_power(s);
  ASSERT_TRUE(workers.is_ok()) << workers.status().message();
  const std::vector<PowerState> states = (*workers)[0].states(64.0);
  const std::string w = "imagenet/resnet50/adadelta";
  const auto full = table->figure("v100", w, 64, 250.0);
  ASSERT_TRUE(full.is_ok());
  std::vector<double> limits;
  for (const PowerState& st : states) {
    limits.push_back(st.level);
    const auto f = table->figure("v100", w, 64, st.level);
    ASSERT_TRUE(f.is_ok());
    EXPECT_EQ(f->source, traces::GpuFigureSource::kMeasured);
    EXPECT_DOUBLE_EQ(st.slowdown, f->time_per_epoch_s / full->time_per_epoch_s);
    EXPECT_DOUBLE_EQ(st.busy_w, f->average_power_w);
  }
  std::sort(limits.begin(), limits.end());
  EXPECT_EQ(limits, (std::vector<double>{100, 125, 150, 175, 200, 225}));

  EnergyMeter m = EnergyMeter::for_scenario(s);
  ASSERT_TRUE(m.has_figures());
  const double compute = 1.0, wait = 1.0;  // room for any state up to 2x
  m.iteration(row(0, 0.0, compute, wait, 0.0, 64));
  const EnergySummary e = m.summary(2.0, std::nullopt, std::nullopt);
  const double idle = 34.75158532315594;
  double least = compute * full->average_power_w + wait * idle;
  std::size_t chosen = states.size();
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (compute * states[i].slowdown > compute + wait) continue;
    const double j = compute * states[i].slowdown * states[i].busy_w + (compute + wait - compute * states[i].slowdown) * idle;
    if (j < least) least = j, chosen = i;
  }
  ASSERT_LT(chosen, states.size());
  EXPECT_NEAR(e.compute_j, compute * states[chosen].slowdown * states[chosen].busy_w, 1e-9);
  EXPECT_NEAR(e.joules, least, 1e-9);
  EXPECT_TRUE(e.alpha_band.empty());
  ASSERT_EQ(e.sources.back().first, "slowing");
  EXPECT_EQ(e.sources.back().second.rfind("measured table (v100 imagenet/resnet50/adadelta", 0), 0u)
      << e.sources.back().second;
}

// A platform host's slower pstates are a CPU worker's states: the speed ratio and the pstate's busy watts, shared.
TEST(EnergyMeter, HostPstatesAreStates) {
  HostWattage h{"alpha", "10:100, 8:60, 5:7:30", "", /*pstate=*/0, /*pstates=*/3, /*workers=*/2, {4e9, 2e9, 1e9}};
  const std::vector<PowerState> states = host_pstate_states(h);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_DOUBLE_EQ(states[0].slowdown, 2.0);
  EXPECT_DOUBLE_EQ(states[0].busy_w, 30.0);
  EXPECT_DOUBLE_EQ(states[0].level, 1.0);
  EXPECT_DOUBLE_EQ(states[1].slowdown, 4.0);
  EXPECT_DOUBLE_EQ(states[1].busy_w, 15.0);
  h.speeds.clear();  // no per-pstate speeds: no states (the law)
  EXPECT_TRUE(host_pstate_states(h).empty());
}

// The law's alpha band: f = 3/4 over 3 s of compute and 1 s of slack at 1 W idle and waiting, 9 W busy. The same
// factor under f^1, f^2, f^3: 4 s at 1 + 8 f^a; the unslowed phase is 3 s at 9 W then 1 s at 1 W (28 J).
TEST(EnergyMeter, AlphaBandReportsTheSavingUnderEachExponent) {
  scenarios::EnergySpec sp = spec(scenarios::PhasePowerMode::kIdle);
  sp.slow_with_slack = true;
  EnergyMeter m(sp, {cpu(1, 1.0, 9.0)});
  m.iteration(row(0, 0.0, 3.0, 1.0, 0.0));
  const EnergySummary e = m.summary(4.0, std::nullopt, std::nullopt);
  ASSERT_EQ(e.alpha_band.size(), 3u);
  for (int a = 1; a <= 3; ++a) {
    const double j = 4.0 * (1.0 + 8.0 * std::pow(0.75, a));
    EXPECT_DOUBLE_EQ(e.alpha_band[a - 1].alpha, a);
    EXPECT_NEAR(e.alpha_band[a - 1].joules, j, 1e-12);
    EXPECT_NEAR(e.alpha_band[a - 1].saving_pct, 100.0 * (28.0 - j) / 28.0, 1e-9);
  }
  EXPECT_NEAR(e.alpha_band[2].joules, e.joules, 1e-12);  // the chosen exponent's is the run's
  // Under a linear law with waiting at idle power, slowing saves nothing: 4 x (1 + 8 x 3/4) = 28 J, the unslowed.
  EXPECT_NEAR(e.alpha_band[0].saving_pct, 0.0, 1e-9);
  EXPECT_GT(e.alpha_band[2].saving_pct, e.alpha_band[1].saving_pct);
  EXPECT_EQ(e.sources.back().second.rfind("assumed law", 0), 0u);
}

// A record the driver slowed into a measured state with a switch: charged at the state's power over its compute
// (the switch inside it); the decision name is in the block.
TEST(EnergyMeter, DriverStatesAndSwitchesAreCharged) {
  scenarios::Scenario s = parse(std::string(kGpuNode) +
                                "energy: {wait: idle, slow_with_slack: true, slowing_decision: previous, "
                                "switch_cost_s: 0.02, gpu: {table: {kind: v100, workload: imagenet/resnet50/adadelta, "
                                "power_limit: 250}}}\n");
  EXPECT_EQ(s.energy->slowing_decision, scenarios::SlowingDecision::kPrevious);
  EXPECT_DOUBLE_EQ(s.energy->switch_cost_s, 0.02);
  EnergyMeter m = EnergyMeter::for_scenario(s);
  auto workers = worker_power(s);
  ASSERT_TRUE(workers.is_ok());
  const std::vector<PowerState> states = (*workers)[0].states(64.0);
  ASSERT_FALSE(states.empty());
  IterationRecord r = row(0, 0.0, 1.0 * states[0].slowdown + 0.02, 0.5, 0.0, 64);
  r.frequency = 1.0 / states[0].slowdown, r.power_state = 0, r.switch_s = 0.02;
  m.iteration(r);
  const EnergySummary e = m.summary(r.compute_s + 0.5, std::nullopt, std::nullopt);
  EXPECT_NEAR(e.compute_j, r.compute_s * states[0].busy_w, 1e-9);
  EXPECT_EQ(e.slowing_decision, "previous");
  auto bad = scenarios::parse_scenario(std::string(kGpuNode) + "energy: {slowing_decision: later}\n", "e.yaml");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("slowing_decision"), std::string::npos) << bad.status().message();
}

TEST(EnergyMeter, ParseErrors) {
  for (const char* bad : {"energy: {wait: sometimes}\n", "energy: {comm: sometimes}\n", "energy: {cpu: {idle: -1}}\n",
                          "energy: {gpu: {busy: 100, table: {kind: v100, workload: w, power_limit: 250}}}\n",
                          "energy: {gpu: {table: {kind: v100, power_limit: 250}}}\n",
                          "energy: {gpu: {busy_by_batch: [[8, 39], [4, 50]]}}\n", "energy: {min_frequency: 0}\n",
                          "energy: {cpu: {busy_by_batch: [[8, 1]]}}\n", "energy: {colour: red}\n"}) {
    auto s = scenarios::parse_scenario(std::string(kExplicit) + bad, "energy-test.yaml");
    EXPECT_FALSE(s.is_ok()) << bad;
  }
  const scenarios::Scenario s = parse(std::string(kExplicit) + "energy: {wait: 7.5, comm: idle}\n");
  EXPECT_EQ(s.energy->wait.mode, scenarios::PhasePowerMode::kWatts);
  EXPECT_DOUBLE_EQ(s.energy->wait.watts, 7.5);
  EXPECT_EQ(s.energy->comm.mode, scenarios::PhasePowerMode::kIdle);
}

// The testbed's blocks (source set): a CPU-time model with its own energy.csv columns; a measured one host-wide,
// without energy.csv.
TEST(EnergyMeter, TestbedBlocksCarryTheirSource) {
  for (const bool measured : {false, true}) {
    TempDir tmp;
    auto w = RunWriter::open((tmp.path() / "r").string(), "{}", false);
    ASSERT_TRUE(w.is_ok());
    RunRecorder rec(std::move(w).value(), RecorderOptions{true, false});
    RunSummary sum;
    EnergySummary e;
    e.source = measured ? "measured" : "modelled-cputime";
    e.note = "a note";
    e.joules = 32.0, e.average_power_w = 3.2, e.compute_j = 15.0, e.idle_j = 17.0, e.cpu_s = 3.0, e.window_s = 10.0;
    if (measured) {
      e.modelled_j = 30.0;
    } else {
      WorkerEnergy row;
      row.compute_j = 15.0, row.idle_j = 17.0, row.cpu_s = 3.0, row.allotted_core_s = 20.0;
      e.workers.push_back(row);
    }
    sum.energy = e;
    ASSERT_TRUE(rec.finish(sum).is_ok());
    const auto j = nlohmann::ordered_json::parse(read_file(tmp.path() / "r" / "summary.json"));
    if (measured) {
      EXPECT_EQ(j["energy"].dump(), R"({"joules":32.0,"average_power_w":3.2,"modelled_j":30.0,"cpu_s":3.0,)"
                                    R"("window_s":10.0,"source":"measured","note":"a note"})");
      EXPECT_FALSE(std::filesystem::exists(tmp.path() / "r" / "energy.csv"));
    } else {
      EXPECT_EQ(j["energy"].dump(), R"({"joules":32.0,"average_power_w":3.2,"busy_j":15.0,"idle_j":17.0,"cpu_s":3.0,)"
                                    R"("window_s":10.0,"source":"modelled-cputime","note":"a note"})");
      EXPECT_EQ(read_file(tmp.path() / "r" / "energy.csv"),
                "worker,busy_j,idle_j,joules,cpu_s,allotted_core_s\n0,15,17,32,3,20\n");
    }
  }
}

TEST(EnergyMeter, WorkerPowerNamesTheWorkerWithoutFigures) {
  auto none = worker_power(parse(std::string(kExplicit)));
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().message(),
            "no power figures for worker 0 (a: no preset; give energy.cpu.idle and energy.cpu.busy)");
  auto some = worker_power(parse(std::string(kExplicit) + "energy: {cpu: {idle: 1, busy: 2}}\n"));
  ASSERT_TRUE(some.is_ok()) << some.status().message();
  ASSERT_EQ(some->size(), 1u);
  EXPECT_DOUBLE_EQ((*some)[0].count, 2.0);
  EXPECT_DOUBLE_EQ((*some)[0].idle_w(), 2.0);
}

TEST(EnergyMeter, AWorkerGrantedPartOfItsCpuIsBusyOnlyOnThatPart) {
  // 2 cores at 1 W idle and 5 W busy per core, computing 4 s with a quarter of its CPU (other load took the rest):
  // (1 + 0.25 * 4) * 2 W = 4 W, 16 J; then 1 s of waiting at idle, 2 J.
  EnergyMeter m(scenarios::EnergySpec{}, {cpu(2, 1.0, 5.0)});
  m.set_busy_fraction(0, 0.25);
  m.iteration(row(0, 0.0, 4.0, 1.0, 0.0));
  const EnergySummary e = m.summary(5.0, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(e.compute_j, 16.0);
  EXPECT_DOUBLE_EQ(e.wait_j, 2.0);
  EnergyMeter full(scenarios::EnergySpec{}, {cpu(2, 1.0, 5.0)});
  full.set_busy_fraction(0, 1.0);  // the default: unchanged
  full.iteration(row(0, 0.0, 4.0, 1.0, 0.0));
  EXPECT_DOUBLE_EQ(full.summary(5.0, std::nullopt, std::nullopt).compute_j, 40.0);
}

// energy.objective: one of energy_within and time_within, a percent >= 0, and not with slow_with_slack.
TEST(EnergyMeter, ObjectiveParsesAndRefusesAmbiguity) {
  const scenarios::Scenario s = parse(std::string(kExplicit) + "energy: {objective: {time_within: 5}}\n");
  ASSERT_TRUE(s.energy->objective.has_value());
  EXPECT_EQ(s.energy->objective->kind, scenarios::EnergyObjective::Kind::kTimeWithin);
  EXPECT_DOUBLE_EQ(s.energy->objective->percent, 5.0);
  EXPECT_EQ(scenarios::objective_name(*s.energy->objective), "time_within 5");
  const auto error = [](const std::string& energy) {
    auto bad = scenarios::parse_scenario(std::string(kExplicit) + energy, "energy-test.yaml");
    return bad.is_ok() ? std::string("parsed") : bad.status().message();
  };
  EXPECT_NE(error("energy: {objective: {time_within: 5, energy_within: 10}}\n").find("give one of energy_within"),
            std::string::npos);
  EXPECT_NE(error("energy: {objective: {}}\n").find("give one of energy_within"), std::string::npos);
  EXPECT_NE(error("energy: {objective: {energy_within: -1}}\n").find("energy.objective.energy_within"),
            std::string::npos);
  EXPECT_NE(error("energy: {slow_with_slack: true, objective: {energy_within: 10}}\n").find("not both"),
            std::string::npos);
}

}  // namespace
}  // namespace omnilearn::run
