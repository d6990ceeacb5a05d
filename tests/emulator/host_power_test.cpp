// The host's calibrated package power (host_power.h) through a fake powercap tree and a scripted clock (the windows
// take no time): idle then busy watts, the prediction in host units by hand, host-power.json read back and refused
// naming the file and field; and the energy verdict (energy_verdict.h) on hand-made run folders: judged like with
// like, else refused with the reason (modelled joules, no calibration, another host, another counter, a scaled run).
#include "omnilearn/emulator/host_power.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fake_powercap.h"
#include "omnilearn/emulator/energy_counter.h"
#include "omnilearn/emulator/energy_verdict.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A package that draws `idle_w` while the host waits and `busy_w` while it is busy, on a scripted clock.
struct ScriptedHost {
  FakePowercap powercap{"host-power"};
  double t_s = 100.0;
  unsigned long long uj = 5'000'000;
  HostPowerRun run(double idle_w, double busy_w) {
    powercap.zone("intel-rapl:0", "package-0", 1ULL << 40, uj);
    HostPowerRun r;
    r.idle_s = 10.0;
    r.busy_s = 5.0;
    r.cores = 4;
    r.clock = [this] { return t_s; };
    r.idle = [this, idle_w](Seconds s) { advance(s, idle_w); };
    r.busy = [this, busy_w](Seconds s, int cores) {
      EXPECT_EQ(cores, 4);
      advance(s, busy_w);
    };
    return r;
  }
  void advance(Seconds s, double w) {
    t_s += s;
    uj += static_cast<unsigned long long>(w * s * 1e6);
    powercap.set("intel-rapl:0", uj);
  }
};

TEST(HostPower, IdleThenBusyWattsThroughTheCounter) {
  ScriptedHost host;
  const HostPowerRun run = host.run(/*idle_w=*/20.0, /*busy_w=*/60.0);
  auto counter = open_rapl(host.powercap.root());
  ASSERT_TRUE(counter.is_ok()) << counter.status().message();
  auto p = measure_host_power(**counter, "host-a", run);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->host_id, "host-a");
  EXPECT_EQ(p->counter, "RAPL package-0");
  EXPECT_EQ(p->cores, 4);
  EXPECT_DOUBLE_EQ(p->idle_s, 10.0);
  EXPECT_DOUBLE_EQ(p->busy_s, 5.0);
  EXPECT_DOUBLE_EQ(p->idle_w, 20.0);  // 200 J over 10 s
  EXPECT_DOUBLE_EQ(p->busy_w, 60.0);  // 300 J over 5 s
  // By hand: 20 W over 100 s, and 50 busy core-seconds at (60 - 20) / 4 = 10 W above idle each: 2000 + 500 J.
  EXPECT_DOUBLE_EQ(predicted_host_joules(*p, 100.0, 50.0), 2500.0);
}

TEST(HostPower, ABusyWindowNoDearerThanIdleIsRefused) {
  ScriptedHost host;
  const HostPowerRun run = host.run(/*idle_w=*/30.0, /*busy_w=*/30.0);
  auto counter = open_rapl(host.powercap.root());
  ASSERT_TRUE(counter.is_ok()) << counter.status().message();
  auto p = measure_host_power(**counter, "host-a", run);
  ASSERT_FALSE(p.is_ok());
  EXPECT_TRUE(contains(p.status().message(), "expected more when busy")) << p.status().message();
}

TEST(HostPower, TheFileReadsBackAndBadFieldsAreNamed) {
  const std::string dir = testing::fresh_dir("host-power");
  HostPower p{"host-a", "RAPL package-0", 4, 20.0, 60.0, 10.0, 5.0};
  const fs::path file = fs::path(dir) / kHostPowerFile;
  ASSERT_TRUE(write_host_power(p, file).is_ok());
  auto back = read_host_power(file);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->host_id, "host-a");
  EXPECT_EQ(back->counter, "RAPL package-0");
  EXPECT_EQ(back->cores, 4);
  EXPECT_DOUBLE_EQ(back->idle_w, 20.0);
  EXPECT_DOUBLE_EQ(back->busy_w, 60.0);
  struct Case {
    std::string text, expected;
  };
  const std::string rest = R"("idle_s": 10, "busy_s": 5})";
  for (const Case& c : std::initializer_list<Case>{
           {"{", "expected a JSON object"},
           {R"({"host_id": "", "counter": "c", "cores": 4, "idle_w": 1, "busy_w": 2, )" + rest, "host_id: expected"},
           {R"({"host_id": "h", "counter": "c", "cores": 0, "idle_w": 1, "busy_w": 2, )" + rest, "cores: expected"},
           {R"({"host_id": "h", "counter": "c", "cores": 4, "idle_w": -1, "busy_w": 2, )" + rest, "idle_w: expected"},
           {R"({"host_id": "h", "counter": "c", "cores": 4, "idle_w": 1, )" + rest, "busy_w: expected"},
           {R"({"host_id": "h", "counter": "c", "cores": 4, "idle_w": 3, "busy_w": 2, )" + rest,
            "busy_w: expected more than idle_w"}}) {
    std::ofstream(file) << c.text;
    auto bad = read_host_power(file);
    ASSERT_FALSE(bad.is_ok()) << c.text;
    EXPECT_TRUE(contains(bad.status().message(), file.string() + ": ")) << bad.status().message();
    EXPECT_TRUE(contains(bad.status().message(), c.expected)) << bad.status().message();
  }
  auto id = this_host_id();
  ASSERT_TRUE(id.is_ok()) << id.status().message();
  EXPECT_FALSE(id->empty());
}

// Hand-made folders of one validation: a testbed run of two workers (shares and nodes' cores given), the
// simulator's run (10 s; busy 2 + 0.5 and 3 + 0.5 s at those shares), and a calibration of host "host-a" (2 cores,
// 20 W idle, 60 W busy: 20 W per busy core above idle).
struct Validation {
  fs::path dir = testing::fresh_dir("energy-verdict");
  fs::path testbed = dir / "testbed", sim = dir / "sim", calibration = dir / "calibration";
  Validation(const std::string& source, const std::string& note, double share, double cores) {
    fs::create_directories(testbed);
    fs::create_directories(sim);
    fs::create_directories(calibration);
    std::ofstream(testbed / "summary.json") << R"({"energy": {"joules": 300, "window_s": 10, "source": ")" << source
                                            << R"(", "note": ")" << note << R"("}})";
    std::ofstream(testbed / "manifest.json")
        << R"({"cpu_shares": [)" << share << ", " << share << R"(], "scenario": {"cluster": {"workers": [{"cores": )"
        << cores << R"(}, {"cores": )" << cores << "}]}}}";
    std::ofstream(sim / "summary.json") << R"({"total_time_s": 10})";
    std::ofstream(sim / "iterations.csv") << "worker,step,compute_s,comm_s,wait_s\n0,0,2,0.5,1\n1,0,3,0.5,0\n";
    std::ofstream(calibration / "profile.yaml") << "name: x\n";
    EXPECT_TRUE(write_host_power({"host-a", "RAPL package-0", 2, 20.0, 60.0, 10.0, 10.0}, calibration / kHostPowerFile)
                    .is_ok());
  }
  Result<EnergyVerdict> judge(const std::string& host = "host-a") const {
    return judge_host_energy(calibration, testbed, sim, host);
  }
};

constexpr const char* kRaplNote = "RAPL package-0: the whole host over the training window";

TEST(EnergyVerdict, JudgedLikeWithLikeInTheHostsUnits) {
  const Validation v("measured", kRaplNote, 1.0, 1.0);
  auto verdict = v.judge();
  ASSERT_TRUE(verdict.is_ok()) << verdict.status().message();
  ASSERT_TRUE(verdict->judged()) << verdict->refusal;
  // By hand: 20 W x 10 s + 20 W x (2.5 + 3.5) core-s = 200 + 120 = 320 J against 300 J measured: +6.67%.
  EXPECT_DOUBLE_EQ(verdict->busy_core_s, 6.0);
  EXPECT_DOUBLE_EQ(verdict->predicted_j, 320.0);
  EXPECT_NEAR(verdict->error_pct, 100.0 / 15.0, 1e-12);
  EXPECT_TRUE(verdict->within);
  EXPECT_TRUE(contains(format_energy_verdict(*verdict), "error +6.67%: within 15%")) << format_energy_verdict(*verdict);
  const fs::path file = v.dir / kEnergyVerdictFile;
  ASSERT_TRUE(write_energy_verdict(*verdict, file).is_ok());
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_TRUE(contains(text, R"("judged": true)")) << text;
  EXPECT_TRUE(contains(text, R"("within": "yes")")) << text;
}

TEST(EnergyVerdict, RefusedWithTheReasonOtherwise) {
  struct Case {
    std::string source, note;
    double share, cores;
    std::string host, expected;
    bool drop_calibration = false;
  };
  const std::vector<Case> cases = {
      {"modelled-cputime", "modelled from ...", 1, 1, "host-a",
       "the testbed's joules are modelled-cputime, not measured"},
      {"measured", kRaplNote, 1, 1, "host-a", "the energy figures were not calibrated on this host", true},
      {"measured", kRaplNote, 1, 1, "host-b", "calibrated on another host (host-a"},
      {"measured", "NVML GPU 0 (X): every GPU", 1, 1, "host-a",
       "another counter than the calibration's (RAPL package-0)"},
      {"measured", kRaplNote, 0.1875, 6, "host-a", "the run is scaled: worker 0's node has 6 cores and ran on 0.1875"},
  };
  for (const Case& c : cases) {
    const Validation v(c.source, c.note, c.share, c.cores);
    if (c.drop_calibration) fs::remove(v.calibration / kHostPowerFile);
    auto verdict = v.judge(c.host);
    ASSERT_TRUE(verdict.is_ok()) << verdict.status().message();
    EXPECT_FALSE(verdict->judged()) << c.expected;
    EXPECT_TRUE(contains(verdict->refusal, c.expected)) << verdict->refusal;
    EXPECT_EQ(format_energy_verdict(*verdict).rfind("energy: no verdict: ", 0), 0u);
  }
}

TEST(EnergyVerdict, ABrokenFileIsAnErrorNamingIt) {
  const Validation v("measured", kRaplNote, 1.0, 1.0);
  std::ofstream(v.sim / "iterations.csv") << "worker,step,compute_s,comm_s\n0,0,fast,0\n";
  auto verdict = v.judge();
  ASSERT_FALSE(verdict.is_ok());
  EXPECT_TRUE(contains(verdict.status().message(), (v.sim / "iterations.csv").string() + ":2"))
      << verdict.status().message();
}

}  // namespace
}  // namespace omnilearn::emulator
