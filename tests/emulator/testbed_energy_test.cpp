// A testbed run's energy with hand-computed joules: the CPU-time model (busy per core-second used, idle for the rest
// of the allotted core-time, in the emulated node's cores), /proc/PID/stat, and the meter's window with a scripted
// counter and scripted CPU times.
#include "omnilearn/emulator/testbed_energy.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace omnilearn::emulator {
namespace {

TEST(ModelledWorkerEnergy, BusyForItsCpuTimeIdleForTheRest) {
  // CPU time c = 3 s over w = 10 s on n = 2 cores (a share of 2 host cores), idle 1 W, busy 5 W per core:
  // c * b + (n * w - c) * i = 15 + 17 = 32 J.
  const run::WorkerEnergy e = modelled_worker_energy({/*share_cores=*/2, /*node_cores=*/2, /*idle_w=*/1, /*busy_w=*/5},
                                                     /*cpu_s=*/3, /*window_s=*/10);
  EXPECT_DOUBLE_EQ(e.compute_j, 15.0);
  EXPECT_DOUBLE_EQ(e.idle_j, 17.0);
  EXPECT_DOUBLE_EQ(e.joules(), 32.0);
  EXPECT_DOUBLE_EQ(e.cpu_s, 3.0);
  EXPECT_DOUBLE_EQ(e.allotted_core_s, 20.0);
}

TEST(ModelledWorkerEnergy, ScaledToTheEmulatedNode) {
  // Half a host core emulates a 4-core node: 0.75 host CPU-seconds are 6 node core-seconds; over 10 s the node has
  // 40: 6 * 5 + 34 * 1 = 64 J.
  const run::WorkerEnergy e = modelled_worker_energy({0.5, 4, 1, 5}, 0.75, 10);
  EXPECT_DOUBLE_EQ(e.cpu_s, 6.0);
  EXPECT_DOUBLE_EQ(e.joules(), 64.0);
  // More CPU time than the allotment (a quota burst) leaves no idle part, never a negative one.
  const run::WorkerEnergy over = modelled_worker_energy({1, 1, 1, 5}, 12, 10);
  EXPECT_DOUBLE_EQ(over.idle_j, 0.0);
  EXPECT_DOUBLE_EQ(over.joules(), 60.0);
}

TEST(ProcStat, UserPlusSystemTicksAfterTheLastParenthesis) {
  // A command name with spaces and parentheses; utime (field 14) 250 and stime (15) 150 ticks at 100 a second.
  auto s = parse_proc_stat_cpu_s("1234 (my (odd) prog) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 1 0 99", 100.0);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(*s, 4.0);
  EXPECT_FALSE(parse_proc_stat_cpu_s("1234 (prog) S 1 2 3", 100.0).is_ok());
  EXPECT_FALSE(parse_proc_stat_cpu_s("no parenthesis", 100.0).is_ok());
  EXPECT_FALSE(parse_proc_stat_cpu_s("1 (p) S 1 2 3 4 5 6 7 8 9 10 x 150", 100.0).is_ok());
  auto self = process_cpu_s(::getpid());
  ASSERT_TRUE(self.is_ok()) << self.status().message();
  EXPECT_GE(*self, 0.0);
  EXPECT_FALSE(process_cpu_s(-1).is_ok());
}

// A counter that returns the scripted totals in turn.
class ScriptedCounter final : public EnergyCounter {
 public:
  explicit ScriptedCounter(std::deque<double> j) : j_(std::move(j)) {}
  std::string description() const override { return "scripted"; }
  Result<double> joules() override {
    if (j_.empty()) return Status::io_error("scripted counter: no more readings");
    const double v = j_.front();
    j_.pop_front();
    return v;
  }

 private:
  std::deque<double> j_;
};

// Two workers: half a host core as a 2-core node, one host core as a 1-core node; idle 1 W, busy 4 W per core. CPU
// times (host seconds) in turn: {10, 20} at the start, {10.5, 21} at the end.
TestbedEnergyMeter::Sources two_workers(std::deque<std::vector<Seconds>> times) {
  TestbedEnergyMeter::Sources s;
  s.counter_reason = "none here";
  s.workers = {{0.5, 2, 1, 4}, {1, 1, 1, 4}};
  auto script = std::make_shared<std::deque<std::vector<Seconds>>>(std::move(times));
  s.cpu_times = [script]() -> Result<std::vector<Seconds>> {
    if (script->empty()) return Status::io_error("no more CPU times");
    auto v = script->front();
    script->pop_front();
    return v;
  };
  s.cpu_time_origin = "scripted";
  return s;
}

TEST(TestbedEnergyMeter, ModelledFromCpuTimeOverTheTrainingWindow) {
  TestbedEnergyMeter m(two_workers({{10, 20}, {10.5, 21}}));
  m.start(1.0);
  m.sample(1.5, /*window_end=*/false);  // no iteration: the CPU times are not read
  m.sample(3.0, /*window_end=*/true);
  m.sample(4.0, /*window_end=*/false);  // after the last iteration: not in the window
  const run::EnergySummary e = m.summary();
  ASSERT_TRUE(e.reason.empty()) << e.reason;
  EXPECT_EQ(e.source, "modelled-cputime");
  // Window 2 s. Worker 0: 0.5 host s -> 2 node core-s of 4: 2 * 4 + 2 * 1 = 10 J. Worker 1: 1 of 2: 4 + 1 = 5 J.
  EXPECT_DOUBLE_EQ(*e.window_s, 2.0);
  EXPECT_DOUBLE_EQ(e.joules, 15.0);
  EXPECT_DOUBLE_EQ(e.compute_j, 12.0);
  EXPECT_DOUBLE_EQ(e.idle_j, 3.0);
  EXPECT_DOUBLE_EQ(e.average_power_w, 7.5);
  EXPECT_DOUBLE_EQ(*e.cpu_s, 1.5);  // host CPU-seconds
  ASSERT_EQ(e.workers.size(), 2u);
  EXPECT_DOUBLE_EQ(e.workers[0].joules(), 10.0);
  EXPECT_NE(e.note.find("modelled from the CPU time of scripted"), std::string::npos) << e.note;
  EXPECT_NE(e.note.find("no energy counters: none here"), std::string::npos) << e.note;
}

TEST(TestbedEnergyMeter, MeasuredByTheCounterWithTheModelBeside) {
  TestbedEnergyMeter::Sources s = two_workers({{10, 20}, {10.5, 21}});
  s.counter = std::make_unique<ScriptedCounter>(std::deque<double>{100, 101, 130, 150});
  TestbedEnergyMeter m(std::move(s));
  m.start(1.0);                         // 100 J
  m.sample(2.0, /*window_end=*/false);  // 101 J
  m.sample(3.0, /*window_end=*/true);   // 130 J: the window's end
  m.sample(4.0, /*window_end=*/false);  // 150 J, after it
  const run::EnergySummary e = m.summary();
  ASSERT_TRUE(e.reason.empty()) << e.reason;
  EXPECT_EQ(e.source, "measured");
  EXPECT_DOUBLE_EQ(e.joules, 30.0);
  EXPECT_DOUBLE_EQ(e.average_power_w, 15.0);
  EXPECT_DOUBLE_EQ(*e.modelled_j, 15.0);
  EXPECT_TRUE(e.workers.empty());  // host-wide: no per-worker rows
  EXPECT_NE(e.note.find("the whole host"), std::string::npos) << e.note;
}

TEST(TestbedEnergyMeter, AFailedReadingLeavesTheWindowAsItWas) {
  TestbedEnergyMeter m(two_workers({{10, 20}, {10.5, 21}}));  // a third reading fails
  m.start(1.0);
  m.sample(3.0, true);
  m.sample(5.0, true);
  const run::EnergySummary e = m.summary();
  EXPECT_DOUBLE_EQ(*e.window_s, 2.0);
  EXPECT_DOUBLE_EQ(e.joules, 15.0);
}

TEST(TestbedEnergyMeter, WithoutCountersOrFiguresItSaysWhyRatherThanZeros) {
  TestbedEnergyMeter::Sources s = two_workers({{1, 1}, {2, 2}});
  s.workers.clear();
  s.figures_reason = "no power figures for worker 0 (w0: no preset; give energy.cpu.idle and energy.cpu.busy)";
  TestbedEnergyMeter m(std::move(s));
  m.start(0.0);
  m.sample(1.0, true);
  const run::EnergySummary e = m.summary();
  EXPECT_EQ(e.joules, 0.0);
  EXPECT_NE(e.reason.find("no energy counters (none here)"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("no power figures for worker 0"), std::string::npos) << e.reason;
  TestbedEnergyMeter never(two_workers({}));
  EXPECT_NE(never.summary().reason.find("training never started"), std::string::npos) << never.summary().reason;
}

// A GPU run: the NVML counter's joules over the window with the phase records' model beside them; without a counter,
// or when it fails, the phases' model labelled modelled with the reason; without figures either, the reasons alone.
TEST(GpuRunEnergy, MeasuredByTheGpuCounterElseModelledFromPhasesWithTheReason) {
  run::EnergySummary phases;
  phases.joules = 800.0;
  phases.compute_j = 600.0;
  TestbedEnergyMeter::Sources s;
  s.counter = std::make_unique<ScriptedCounter>(std::deque<double>{1000, 1900});
  s.figures_reason = "a GPU run is modelled from its phase records instead";
  TestbedEnergyMeter m(std::move(s));
  m.start(0.0);
  m.sample(3.0, /*window_end=*/true);
  auto measured = gpu_run_energy(phases, m.summary(), "NVML GPU 0 (X)", "");
  ASSERT_TRUE(measured && measured->reason.empty()) << (measured ? measured->reason : "none");
  EXPECT_EQ(measured->source, "measured");
  EXPECT_DOUBLE_EQ(measured->joules, 900.0);
  EXPECT_DOUBLE_EQ(measured->average_power_w, 300.0);
  EXPECT_DOUBLE_EQ(*measured->modelled_j, 800.0);
  EXPECT_EQ(measured->note.rfind("NVML GPU 0 (X): every GPU of the host", 0), 0u) << measured->note;

  auto none = gpu_run_energy(phases, std::nullopt, "", "cannot load the NVML library libnvidia-ml.so.1: ...");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->source, "modelled-phases");
  EXPECT_DOUBLE_EQ(none->joules, 800.0);
  EXPECT_FALSE(none->modelled_j);
  EXPECT_NE(none->note.find("(modelled, not measured): no GPU energy counter (cannot load the NVML library"),
            std::string::npos)
      << none->note;

  TestbedEnergyMeter::Sources failing;
  failing.counter = std::make_unique<ScriptedCounter>(std::deque<double>{});  // every reading fails
  TestbedEnergyMeter f(std::move(failing));
  f.start(0.0);
  f.sample(1.0, true);
  auto unread = gpu_run_energy(phases, f.summary(), "NVML GPU 0 (X)", "");
  ASSERT_TRUE(unread);
  EXPECT_EQ(unread->source, "modelled-phases");
  EXPECT_NE(unread->note.find("the GPU energy counter (NVML GPU 0 (X)) could not be read"), std::string::npos)
      << unread->note;

  run::EnergySummary no_figures;
  no_figures.reason = "no power figures for worker 0";
  auto neither = gpu_run_energy(no_figures, std::nullopt, "", "NVML sees no GPU");
  ASSERT_TRUE(neither);
  EXPECT_EQ(neither->reason, "no GPU energy counter (NVML sees no GPU); no power figures for worker 0");
}

}  // namespace
}  // namespace omnilearn::emulator
