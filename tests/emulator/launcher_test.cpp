// The launcher with the Torch-free fake worker: a run that completes, a worker killed with SIGKILL, SIGINT and
// SIGTERM to the launcher, and the errors that must come before any worker starts.
#include "omnilearn/emulator/launcher.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "omnilearn/emulator/names.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "cgroup_skip.h"
#include "fake_launch_environment.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;
using testing::FakeLaunchEnvironment;
using testing::fresh_dir;
using testing::write_scenario;

scenarios::Scenario load(const std::string& path) {
  auto s = scenarios::load_scenario(path);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return *s;
}

// The fake worker with `args`, in FakeThrottlers unless `host_groups` (the host's cgroups).
std::shared_ptr<FakeLaunchEnvironment> fake_env(std::vector<std::string> args = {}, bool host_groups = false) {
  auto env = std::make_shared<FakeLaunchEnvironment>(OMNILEARN_FAKE_WORKER, std::move(args));
  env->host_groups = host_groups;
  return env;
}

// A quiet launch into `out` in `env`.
LaunchOptions fake_options(const std::string& out, std::shared_ptr<LaunchEnvironment> env) {
  LaunchOptions o;
  o.output_dir = out;
  o.environment = std::move(env);
  o.log = [](const std::string&) {};
  return o;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// This process's cgroup folders of scenario `scenario_name` in controller `c`.
std::vector<fs::path> my_cgroups(const std::string& scenario_name, const char* c = "cpu") {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path("/sys/fs/cgroup") / c, ec)) {
    const std::string name = e.path().filename().string();
    const auto owner = parse_cgroup_run_folder(name);
    if (owner && owner->pid == ::getpid() && name.starts_with(cgroup_run_folder(scenario_name) + "-")) out.push_back(e.path());
  }
  return out;
}

// No cgroup folder of this process's runs is left in any controller.
void expect_no_cgroups_left(const std::string& scenario_name) {
  for (const char* c : {"cpu", "cpuacct", "freezer"}) EXPECT_EQ(my_cgroups(scenario_name, c), std::vector<fs::path>{}) << c;
}

TEST(Launcher, CompletedRunWritesTheRunFolderAndReplaysAvailability) {
  const std::string dir = fresh_dir("complete");
  const auto scenario = load(write_scenario(dir, "complete", 2,
                                            "availability:\n  schedule:\n    unit: seconds\n    phases:\n"
                                            "      - {at: 0, fractions: [1, 0.5]}\n      - {at: 0.1, fractions: [0.25, 1]}\n"));
  const auto env = fake_env({"--fake-steps", "30", "--fake-step-ms", "10"});
  auto r = run_emulation(scenario, fake_options(dir + "/run", env));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_NE(env->throttler, nullptr);
  const FakeThrottler* fake = env->throttler.get();
  EXPECT_EQ(r->outcome, RunOutcome::kCompleted) << r->message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(fake->attached().size(), 2u);
  EXPECT_TRUE(fake->removed());
  // Initial level, then the change at 0.1 s (worker 0 to 0.25, worker 1 back to 1).
  ASSERT_GE(fake->calls().size(), 3u);
  EXPECT_EQ(fake->fractions(), (std::vector<double>{0.25, 1.0}));
  for (const char* f : {"manifest.json", "iterations.csv", "plans.csv", "availability.csv", "evaluations.csv",
                        "summary.json", "timeline.json"}) {
    EXPECT_TRUE(fs::exists(dir + "/run/" + f)) << f;
  }
  const auto summary = nlohmann::json::parse(std::ifstream(dir + "/run/summary.json"));
  EXPECT_EQ(summary["iterations"], 30);
  EXPECT_EQ(summary["workers"], 2);
  EXPECT_DOUBLE_EQ(summary["time_to_target_s"].get<double>(), 0.2);
  EXPECT_EQ(summary["stop_reason"], "target");  // the controlling process's (rank 0's)
  const auto manifest = nlohmann::json::parse(std::ifstream(dir + "/run/manifest.json"));
  EXPECT_EQ(manifest["backend"], "emulate");
  std::ifstream avail(dir + "/run/availability.csv");
  int rows = -1;
  for (std::string line; std::getline(avail, line);) ++rows;
  EXPECT_EQ(rows, 4);  // two initial levels, two changes
}

// One host: the rendezvous goes through a file in the run folder (no TCPStore listening on every interface), and
// the file is gone when the run ends.
TEST(Launcher, OneHostRendezvousIsAFileInTheRunFolder) {
  const std::string dir = fresh_dir("storefile");
  const auto scenario = load(write_scenario(dir, "storefile"));
  auto r = run_emulation(scenario, fake_options(dir + "/run", fake_env({"--fake-steps", "3"})));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->summary.extra.count("store_file_in_run_folder_0"), 1u);
  EXPECT_EQ(r->summary.extra.count("store_file_in_run_folder_1"), 1u);
  EXPECT_EQ(r->summary.extra.count("store_host_given"), 0u);
  EXPECT_FALSE(fs::exists(dir + "/run/.rendezvous"));
}

TEST(Launcher, WorkersStartInsideTheirCgroup) {
  SKIP_WITHOUT_CGROUPS();
  const std::string dir = fresh_dir("incgroup");
  const auto scenario = load(write_scenario(dir, "incgroup"));
  auto r = run_emulation(scenario, fake_options(dir + "/run", fake_env({"--fake-steps", "3"}, /*host_groups=*/true)));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->summary.extra.count("started_in_cgroup_0"), 1u);
  EXPECT_EQ(r->summary.extra.count("started_in_cgroup_1"), 1u);
  expect_no_cgroups_left("incgroup");
}

TEST(Launcher, KilledWorkerStopsTheRunAndCleansUp) {
  SKIP_WITHOUT_CGROUPS();
  const std::string dir = fresh_dir("kill9");
  const auto scenario = load(write_scenario(dir, "kill9", 3));
  std::vector<pid_t> pids;
  std::chrono::steady_clock::time_point killed_at;
  const auto env = fake_env({"--fake-steps", "100000", "--fake-step-ms", "5", "--fake-ignore-term"}, true);
  std::thread killer;
  env->on_started = [&](const std::vector<pid_t>& p) {
    pids = p;
    killer = std::thread([&, victim = p[1]] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      killed_at = std::chrono::steady_clock::now();
      ::kill(victim, SIGKILL);
    });
  };
  auto r = run_emulation(scenario, fake_options(dir + "/run", env));
  const auto ended = std::chrono::steady_clock::now();
  killer.join();
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->outcome, RunOutcome::kWorkerFailed);
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_NE(r->message.find("worker 1"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("signal 9"), std::string::npos) << r->message;
  EXPECT_LT(std::chrono::duration<double>(ended - killed_at).count(), 5.0);
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
  expect_no_cgroups_left("kill9");
  // What was written is kept; no summary for a failed run.
  EXPECT_TRUE(fs::exists(dir + "/run/iterations.csv"));
  EXPECT_GT(fs::file_size(dir + "/run/iterations.csv"), 100u);
  EXPECT_FALSE(fs::exists(dir + "/run/summary.json"));
}

TEST(Launcher, WorkerExitCodeIsReported) {
  const std::string dir = fresh_dir("exitcode");
  const auto scenario = load(write_scenario(dir, "exitcode"));
  auto r = run_emulation(scenario, fake_options(dir + "/run", fake_env({"--fake-steps", "40", "--fake-exit", "0:7"})));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_NE(r->message.find("worker 0"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("exited with code 7"), std::string::npos) << r->message;
}

void stop_by_signal(int signo, int expected_exit, RunOutcome expected) {
  SKIP_WITHOUT_CGROUPS();
  const std::string name = std::string("sig").append(std::to_string(signo));
  const std::string dir = fresh_dir(name);
  const auto scenario = load(write_scenario(dir, name, 2));
  std::vector<pid_t> pids;
  const auto env = fake_env({"--fake-steps", "100000", "--fake-step-ms", "5"}, /*host_groups=*/true);
  std::thread sender;
  env->on_started = [&](const std::vector<pid_t>& p) {
    pids = p;
    sender = std::thread([signo] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(::getpid(), signo);
    });
  };
  auto r = run_emulation(scenario, fake_options(dir + "/run", env));
  sender.join();
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->outcome, expected);
  EXPECT_EQ(r->exit_code, expected_exit);
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
  expect_no_cgroups_left(name);
  EXPECT_GT(fs::file_size(dir + "/run/iterations.csv"), 100u);
}

TEST(Launcher, SigintStopsEverythingWithExit130) { stop_by_signal(SIGINT, 130, RunOutcome::kInterrupted); }
TEST(Launcher, SigtermStopsEverythingWithExit143) { stop_by_signal(SIGTERM, 143, RunOutcome::kTerminated); }

TEST(Launcher, MissingDatasetIsAnErrorBeforeAnyWorkerStarts) {
  const std::string dir = fresh_dir("nodata");
  const auto scenario = load(write_scenario(dir, "nodata"));
  const auto env = fake_env({}, /*host_groups=*/true);
  env->host_dataset = true;
  bool started = false;
  env->on_started = [&](const std::vector<pid_t>&) { started = true; };
  scenarios::EmulatorSpec c;
  c.data_source = dir + "/no-such-folder";
  c.cache_dir = dir + "/cache";
  auto r = run_emulation(with_settings(scenario, c), fake_options(dir + "/run", env));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("dataset-fashion-mnist"), std::string::npos) << r.status().message();
  EXPECT_FALSE(started);
  EXPECT_FALSE(fs::exists(dir + "/run"));
}

TEST(Launcher, TooMuchCpuIsAnErrorBeforeAnyWorkerStarts) {
  const std::string dir = fresh_dir("toomuch");
  const auto scenario = load(write_scenario(dir, "toomuch"));
  scenarios::EmulatorSpec c;
  c.cpu_budget = 1000.0;
  const auto env = fake_env({}, /*host_groups=*/true);
  auto r = run_emulation(with_settings(scenario, c), fake_options(dir + "/run", env));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("CPUs"), std::string::npos) << r.status().message();
  EXPECT_EQ(env->groups_made, 0);
}

TEST(Launcher, ThrottlerErrorsComeBackBeforeAnyWorkerStarts) {
  const std::string dir = fresh_dir("noperm");
  const auto scenario = load(write_scenario(dir, "noperm"));
  const auto env = fake_env();
  env->groups_error = Status::permission_denied("no permission to create cgroups under /sys/fs/cgroup/cpu");
  bool started = false;
  env->on_started = [&](const std::vector<pid_t>&) { started = true; };
  auto r = run_emulation(scenario, fake_options(dir + "/run", env));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(started);
}

// Issue 12 #1: with a long scenario name the pid was cut off the cgroup name, so a second launcher shared the first
// one's groups and its clean-up SIGKILLed the first one's workers. Launcher A (a child process) runs until
// stopped; launcher B runs the same scenario to completion meanwhile; A's workers must survive B's clean-up.
TEST(Launcher, TwoConcurrentLaunchersWithALongScenarioNameDoNotShareCgroups) {
  SKIP_WITHOUT_CGROUPS();
  const std::string dir = fresh_dir("concurrent");
  auto scenario = load(write_scenario(dir, "concurrent"));
  scenario.name = "concurrent-" + std::string(200, 'n');
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t a = ::fork();
  if (a == 0) {
    ::close(ready[0]);
    const auto env = fake_env({"--fake-steps", "100000", "--fake-step-ms", "5"}, /*host_groups=*/true);
    env->on_started = [&](const std::vector<pid_t>&) { (void)!::write(ready[1], "x", 1); };
    auto r = run_emulation(scenario, fake_options(dir + "/run-a", env));
    ::_exit(r.is_ok() ? r->exit_code : 99);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "launcher A did not start its workers";
  ::close(ready[0]);

  auto b = run_emulation(scenario, fake_options(dir + "/run-b", fake_env({"--fake-steps", "5"}, /*host_groups=*/true)));
  EXPECT_TRUE(b.is_ok()) << b.status().message();
  if (b.is_ok()) {
    EXPECT_EQ(b->exit_code, 0) << b->message;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a worker SIGKILLed by B's clean-up is seen by A
  ::kill(a, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(a, &status, 0), a);
  // 143: A was stopped by our SIGTERM with its workers intact; 1 would mean one of them was killed under it.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << status;
  const auto manifest_a = nlohmann::json::parse(std::ifstream(dir + "/run-a/manifest.json"));
  const auto manifest_b = nlohmann::json::parse(std::ifstream(dir + "/run-b/manifest.json"));
  EXPECT_NE(manifest_a["cgroup_folder"], manifest_b["cgroup_folder"]);
  EXPECT_TRUE(parse_cgroup_run_folder(manifest_b["cgroup_folder"].get<std::string>()).has_value());
  expect_no_cgroups_left(scenario.name.substr(0, 24));
}

// Issue 12 #2: text that JSON cannot hold (invalid UTF-8) made the manifest throw after the cgroups existed: the
// launcher aborted and leaked them. The parser now refuses such text (hostile_input_test); a scenario built in code
// with it still runs: the manifest holds U+FFFD for the bad bytes (valid JSON), the cgroup name keeps only safe
// characters, and nothing is left behind.
TEST(Launcher, TextThatIsNotUtf8NeitherAbortsNorLeaksCgroups) {
  SKIP_WITHOUT_CGROUPS();
  const std::string dir = fresh_dir("badutf8");
  auto scenario = load(write_scenario(dir, "badutf8"));
  scenario.name = "badutf8\xff\xfe";
  bool started = false;
  const auto env = fake_env({}, /*host_groups=*/true);
  env->on_started = [&](const std::vector<pid_t>&) { started = true; };
  auto r = run_emulation(scenario, fake_options(dir + "/run", env));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0) << r->message;
  EXPECT_TRUE(started);
  const auto manifest = nlohmann::json::parse(std::ifstream(dir + "/run/manifest.json"));
  const std::string replaced = std::string("badutf8") + "\xef\xbf\xbd" + "\xef\xbf\xbd";  // U+FFFD twice
  EXPECT_EQ(manifest["scenario"]["name"].get<std::string>(), replaced);
  expect_no_cgroups_left("badutf8");
}

// Issue 12 #7: the groups of a launcher killed with SIGKILL stayed forever. The next run removes them at its
// start (and `omnilearn emulate --cleanup` on demand; cgroup_cleanup_test covers the rules).
TEST(Launcher, AKilledLaunchersCgroupsAreRemovedByTheNextRun) {
  SKIP_WITHOUT_CGROUPS();
  const std::string dir = fresh_dir("kill9launcher");
  const auto scenario = load(write_scenario(dir, "kill9launcher"));
  const pid_t a = ::fork();
  if (a == 0) {
    const auto env = fake_env({"--fake-steps", "100000", "--fake-step-ms", "5"}, /*host_groups=*/true);
    env->on_started = [](const std::vector<pid_t>&) { ::raise(SIGKILL); };
    (void)run_emulation(scenario, fake_options(dir + "/run-a", env));
    ::_exit(99);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(a, &status, 0), a);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  const auto manifest = nlohmann::json::parse(std::ifstream(dir + "/run-a/manifest.json"));
  const std::string folder = manifest["cgroup_folder"].get<std::string>();
  ASSERT_TRUE(fs::exists(fs::path("/sys/fs/cgroup/cpu") / folder)) << "the killed launcher left no cgroups to find";

  std::vector<std::string> lines;
  LaunchOptions o = fake_options(dir + "/run-b", fake_env({"--fake-steps", "3"}, /*host_groups=*/true));
  o.log = [&](const std::string& line) { lines.push_back(line); };
  auto r = run_emulation(scenario, o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0) << r->message;
  for (const char* c : {"cpu", "cpuacct", "freezer"}) EXPECT_FALSE(fs::exists(fs::path("/sys/fs/cgroup") / c / folder)) << c;
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.find("removed the stale cgroup") != std::string::npos && l.find(folder) != std::string::npos;
  }));
}

// Issue 12 #12: a stopped worker (SIGSTOP, a hung driver, a frozen VM) hung the run silently. Now a worker with no
// iteration row for emulator.stall_timeout_s is named, the run stops (exit 1) and the rows so far are kept.
Result<LaunchResult> run_with_a_silent_worker(const std::string& name, const std::string& how) {
  const std::string dir = fresh_dir(name);
  const auto scenario = load(write_scenario(dir, name, 3));
  const auto env = fake_env({"--fake-steps", "100000", "--fake-step-ms", "5", how, "1:20"});
  std::vector<pid_t> pids;
  env->on_started = [&](const std::vector<pid_t>& p) { pids = p; };
  scenarios::EmulatorSpec c;
  c.stall_timeout_s = 1.5;
  c.stop_grace_s = 0.5;
  auto r = run_emulation(with_settings(scenario, c), fake_options(dir + "/run", env));
  for (pid_t p : pids) EXPECT_FALSE(alive(p)) << p;
  EXPECT_GT(fs::file_size(dir + "/run/iterations.csv"), 100u);  // rows so far are kept
  EXPECT_FALSE(fs::exists(dir + "/run/summary.json"));
  return r;
}

TEST(Launcher, AStoppedWorkerIsNamedAndTheRunStops) {
  auto r = run_with_a_silent_worker("sigstop", "--fake-stop");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->outcome, RunOutcome::kStalled) << r->message;
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_NE(r->message.find("worker 1 (pid"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("stopped (SIGSTOP"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("no progress for"), std::string::npos) << r->message;
}

TEST(Launcher, AHungWorkerIsNamedAndTheRunStops) {
  auto r = run_with_a_silent_worker("hang", "--fake-hang");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->outcome, RunOutcome::kStalled) << r->message;
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(r->message.rfind("worker 1 reported no iteration for", 0), 0u) << r->message;
  EXPECT_EQ(r->message.find("worker 0"), std::string::npos) << r->message;  // the others kept reporting
}

TEST(Launcher, MissingWorkerProgramIsAnError) {
  const std::string dir = fresh_dir("noexe");
  const auto scenario = load(write_scenario(dir, "noexe"));
  auto r = run_emulation(scenario, fake_options(dir + "/run", std::make_shared<FakeLaunchEnvironment>(dir + "/nope")));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("not found"), std::string::npos);
}

// Energy: every run reports it. Scenarios with figures `energy: {cpu: {idle: 1, busy: 5}}` (w0 has 2 cores, w1 1).
const char* kFigures = "energy: {cpu: {idle: 1, busy: 5}}\n";

nlohmann::json energy_block(const std::string& run) {
  return nlohmann::json::parse(std::ifstream(run + "/summary.json")).at("energy");
}

// The modelled block and energy.csv agree with the model, row by row: busy 5 W per core-second used, idle 1 W for
// the rest of each node's cores over the window (w0 2 cores, w1 1); the whole between all-idle and all-busy.
void expect_modelled_from_cpu_time(const std::string& run) {
  const auto e = energy_block(run);
  ASSERT_EQ(e.value("source", ""), "modelled-cputime") << e.dump();
  const double w = e.at("window_s").get<double>(), joules = e.at("joules").get<double>();
  EXPECT_GT(w, 0.0);
  EXPECT_GE(joules, 3 * w * 1.0 - 1e-9);
  EXPECT_LE(joules, 3 * w * 5.0 + 1e-9);
  EXPECT_NEAR(joules, e.at("busy_j").get<double>() + e.at("idle_j").get<double>(), 1e-9 * joules);
  EXPECT_GT(e.at("cpu_s").get<double>(), 0.0);
  std::ifstream csv(run + "/energy.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "worker,busy_j,idle_j,joules,cpu_s,allotted_core_s");
  double sum = 0.0;
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(std::getline(csv, line)) << "row " << k;
    double v[6];
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]), 6)
        << line;
    const double cores = k == 0 ? 2.0 : 1.0;
    EXPECT_NEAR(v[5], cores * w, 1e-9) << line;
    EXPECT_NEAR(v[1], 5.0 * v[4], 1e-9) << line;
    EXPECT_NEAR(v[2], std::max(0.0, v[5] - v[4]) * 1.0, 1e-9) << line;
    sum += v[3];
  }
  EXPECT_NEAR(sum, joules, 1e-9 * joules);
}

TEST(LauncherEnergy, ModelledFromEachProcessCpuTimeWithoutCgroupAccounting) {
  const std::string dir = fresh_dir("energyproc");
  const auto scenario = load(write_scenario(dir, "energyproc", 2, kFigures));
  auto r = run_emulation(scenario, fake_options(dir + "/run", fake_env({"--fake-steps", "20", "--fake-busy-ms", "5"})));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  expect_modelled_from_cpu_time(dir + "/run");
  const std::string note = energy_block(dir + "/run").value("note", "");
  EXPECT_NE(note.find("/proc/PID/stat"), std::string::npos) << note;  // the fake throttler accounts nothing
  EXPECT_NE(note.find("no energy counters"), std::string::npos) << note;
}

TEST(LauncherEnergy, ModelledFromTheWorkersCgroups) {
  SKIP_WITHOUT_CGROUPS();
  const std::string dir = fresh_dir("energycg");
  const auto scenario = load(write_scenario(dir, "energycg", 2, kFigures));
  auto r = run_emulation(scenario, fake_options(dir + "/run", fake_env({"--fake-steps", "20", "--fake-busy-ms", "5"},
                                                                       /*host_groups=*/true)));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  expect_modelled_from_cpu_time(dir + "/run");
  const std::string note = energy_block(dir + "/run").value("note", "");
  EXPECT_NE(note.find("cgroups"), std::string::npos) << note;
  expect_no_cgroups_left("energycg");
}

// A counter that has counted 10 J more at each reading.
class SteadyCounter final : public EnergyCounter {
 public:
  std::string description() const override { return "steady test counter"; }
  Result<double> joules() override { return 10.0 * static_cast<double>(reads_++); }

 private:
  int reads_ = 0;
};

TEST(LauncherEnergy, MeasuredWhereTheHostHasCounters) {
  const std::string dir = fresh_dir("energymeasured");
  const auto scenario = load(write_scenario(dir, "energymeasured", 2, kFigures));
  auto env = fake_env({"--fake-steps", "20"});
  env->counter = []() -> Result<std::unique_ptr<EnergyCounter>> {
    return std::unique_ptr<EnergyCounter>(std::make_unique<SteadyCounter>());
  };
  auto r = run_emulation(scenario, fake_options(dir + "/run", env));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  const auto e = energy_block(dir + "/run");
  EXPECT_EQ(e.value("source", ""), "measured") << e.dump();
  const double joules = e.at("joules").get<double>();
  EXPECT_GT(joules, 0.0);
  EXPECT_EQ(std::fmod(joules, 10.0), 0.0);  // whole readings of the counter
  EXPECT_TRUE(e.contains("modelled_j"));
  EXPECT_NE(e.value("note", "").find("steady test counter: the whole host"), std::string::npos) << e.dump();
  EXPECT_FALSE(fs::exists(dir + "/run/energy.csv"));  // host-wide: no per-worker rows
}

TEST(LauncherEnergy, WithoutCountersOrFiguresTheRunSaysWhy) {
  const std::string dir = fresh_dir("energynone");
  const auto scenario = load(write_scenario(dir, "energynone"));  // explicit nodes, no preset, no energy section
  auto r = run_emulation(scenario, fake_options(dir + "/run", fake_env({"--fake-steps", "5"})));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  const auto e = energy_block(dir + "/run");
  const std::string reason = e.value("reason", "");
  EXPECT_NE(reason.find("no energy counters"), std::string::npos) << e.dump();
  EXPECT_NE(reason.find("no power figures for worker 0"), std::string::npos) << e.dump();
  EXPECT_FALSE(e.contains("joules"));
  EXPECT_FALSE(fs::exists(dir + "/run/energy.csv"));
}

}  // namespace
}  // namespace omnilearn::emulator
