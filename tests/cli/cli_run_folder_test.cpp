// Run folders through the omnilearn binary: one run per folder (a second is refused, naming the holder's pid),
// --force replaces only an earlier run's files, SIGINT/SIGTERM stop `sim` with exit 130/143 and every file valid,
// `sweep --resume` runs only unfinished points, and `mpirun` without --mpi is refused.
#include <gtest/gtest.h>
#include <sys/file.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_test_support.h"

namespace omnilearn::cli::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// `omnilearn` started in the background, its output going to files; stop() sends a signal and waits.
class Background {
 public:
  Background(const std::vector<std::string>& args, const TempDir& dir)
      : out_(dir.at("bg.out")),
        err_(dir.at("bg.err")),
        child_(spawn_program(OMNILEARN_BIN, args, dir.path(), out_, err_)) {}
  pid_t pid() const { return child_ ? child_->pid() : -1; }
  // Sends `signo` and returns the exit code (128 + signal when killed by it).
  int stop(int signo) {
    if (!child_) return -1;
    child_->signal(signo);
    return wait_exit_code(*child_);
  }
  std::string err() const { return read_file(err_); }

 private:
  std::string out_, err_;
  Result<Subprocess> child_;  // SIGKILLed and reaped on destruction if it still runs
};

// Waits (up to a minute: a bound for a broken build, not a speed assumption) until `ready` holds.
bool wait_for(const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Writes quick.yaml into `dir`; the arguments of a sim of it into `run` that runs until it is stopped (a million
// epochs).
std::vector<std::string> endless_sim(const TempDir& dir, const std::string& run) {
  dir.write("quick.yaml", quick_yaml());
  return {"sim", dir.at("quick.yaml"), "--out", dir.at(run), "--set", "workload.epochs=1000000", "--quiet"};
}

// A sim in the background that holds `run`: its lock file names its pid and it has written rows.
bool started_rows(const TempDir& dir, const Background& bg, const std::string& run) {
  return wait_for([&] {
    return contains(read_file(dir.at(run + "/.omnilearn.lock")), std::to_string(bg.pid())) &&
           line_count(read_file(dir.at(run + "/iterations.csv"))) > 20;
  });
}

// Every file of a stopped run parses: whole CSV rows (header's column count), valid timeline.json, no summary.
void expect_valid_stopped_run(const TempDir& dir, const std::string& run) {
  const nlohmann::json timeline = nlohmann::json::parse(read_file(dir.at(run + "/timeline.json")));
  EXPECT_GT(timeline["traceEvents"].size(), 0u);
  for (const char* csv : {"iterations.csv", "plans.csv", "availability.csv", "evaluations.csv"}) {
    SCOPED_TRACE(csv);
    const std::string text = read_file(dir.at(run + "/" + csv));
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    std::istringstream in(text);
    std::string header;
    std::getline(in, header);
    const auto columns = std::count(header.begin(), header.end(), ',');
    for (std::string line; std::getline(in, line);) {
      EXPECT_EQ(std::count(line.begin(), line.end(), ','), columns) << line;
    }
  }
  EXPECT_TRUE(nlohmann::json::parse(read_file(dir.at(run + "/manifest.json"))).is_object());
  EXPECT_FALSE(fs::exists(dir.at(run + "/summary.json")));
  EXPECT_FALSE(fs::exists(dir.at(run + "/.omnilearn.lock")));
}

// Issue 12 #4 and #6: a second sim into a folder in use is refused; SIGINT stops the first with exit 130, a message
// and every file valid.
TEST(CliRunFolder, ASecondSimIntoARunningSimsFolderIsRefusedAndSigintClosesTheFirstValid) {
  TempDir dir;
  const std::vector<std::string> args = endless_sim(dir, "run");
  Background first(args, dir);
  ASSERT_GT(first.pid(), 0);
  ASSERT_TRUE(started_rows(dir, first, "run")) << first.err();

  const RunResult second = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--out", dir.at("run")}, dir.path());
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_TRUE(contains(second.err,
                       dir.at("run") + ": in use by another omnilearn run (pid " + std::to_string(first.pid()) + " "))
      << second.err;
  const RunResult forced =
      run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--force", "--out", dir.at("run")}, dir.path());
  EXPECT_EQ(forced.exit_code, 1) << "--force never takes a folder in use";

  EXPECT_EQ(first.stop(SIGINT), 130) << first.err();
  EXPECT_TRUE(contains(first.err(), "omnilearn sim: stopped by")) << first.err();
  EXPECT_TRUE(contains(first.err(), "SIGINT")) << first.err();
  expect_valid_stopped_run(dir, "run");
}

TEST(CliRunFolder, SigtermStopsSimWithExit143AndValidFiles) {
  TempDir dir;
  const std::vector<std::string> args = endless_sim(dir, "run");
  Background sim(args, dir);
  ASSERT_TRUE(started_rows(dir, sim, "run")) << sim.err();
  EXPECT_EQ(sim.stop(SIGTERM), 143) << sim.err();
  EXPECT_TRUE(contains(sim.err(), "SIGTERM")) << sim.err();
  expect_valid_stopped_run(dir, "run");
}

// A lock held by another process (here: this test, with flock) is named with its pid.
TEST(CliRunFolder, AFolderLockedByAnotherProcessIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  fs::create_directories(dir.at("run"));
  const int fd = ::open(dir.at("run/.omnilearn.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const std::string pid = std::to_string(::getpid()) + "\n";
  ASSERT_EQ(::write(fd, pid.data(), pid.size()), static_cast<ssize_t>(pid.size()));
  const RunResult r = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--out", dir.at("run")}, dir.path());
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "in use by another omnilearn run (pid " + std::to_string(::getpid()))) << r.err;
  EXPECT_FALSE(fs::exists(dir.at("run/iterations.csv")));
}

// Issue 12 #5: a run without timeline kept the previous run's timeline.json.
TEST(CliRunFolder, ANonEmptyFolderIsRefusedAndForceReplacesOnlyRunFiles) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  RunResult r = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--out", dir.at("run")}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir.at("run/timeline.json")));
  dir.write("run/notes.txt", "mine");
  r = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--no-timeline", "--out", dir.at("run")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, dir.at("run") + ": not empty (holds")) << r.err;
  EXPECT_TRUE(contains(r.err, "--force")) << r.err;
  r = run_omnilearn({"sim", dir.at("quick.yaml"), "--quiet", "--no-timeline", "--force", "--out", dir.at("run")},
                    dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir.at("run/timeline.json")));
  EXPECT_TRUE(fs::exists(dir.at("run/summary.json")));
  EXPECT_EQ(read_file(dir.at("run/notes.txt")), "mine");
}

void write_small_sweep(const TempDir& dir) {
  dir.write("quick.yaml", quick_yaml());
  dir.write("small.yaml", "name: small\nbase: quick.yaml\naxes:\n  policy.name: [uniform, omnilearn]\n");
}

// Issue 12 #5: a sweep into an existing folder replaced sweep.csv and kept old point folders.
TEST(CliRunFolder, SweepRefusesAFolderInUseOrNotEmptyAndForceRemovesOnlyItsOwnFiles) {
  TempDir dir;
  write_small_sweep(dir);
  const std::vector<std::string> sweep{"sweep", dir.at("small.yaml"), "--quiet", "--jobs", "1", "--out", dir.at("out")};
  RunResult r = run_omnilearn(sweep, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.at("out/sweep-index.txt")), "small-uniform\nsmall-omnilearn\n");
  r = run_omnilearn(sweep, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "not empty")) << r.err;
  EXPECT_TRUE(contains(r.err, "--resume")) << r.err;

  // The sweep file now has other points: --force removes the old ones (listed in the index), keeps foreign files.
  dir.write("small.yaml", "name: small\nbase: quick.yaml\naxes:\n  policy.name: [uniform, oracle]\n");
  dir.write("out/mine/notes.txt", "mine");
  std::vector<std::string> forced = sweep;
  forced.push_back("--force");
  r = run_omnilearn(forced, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir.at("out/small-omnilearn")));
  EXPECT_FALSE(fs::exists(dir.at("out/small-omnilearn.log")));
  EXPECT_TRUE(fs::exists(dir.at("out/small-oracle/summary.json")));
  EXPECT_EQ(read_file(dir.at("out/mine/notes.txt")), "mine");
  EXPECT_EQ(read_file(dir.at("out/sweep-index.txt")), "small-uniform\nsmall-oracle\n");
}

// Issue 12 #4: two sweeps into one folder both wrote it; a sweep into a folder in use is now refused.
TEST(CliRunFolder, ASweepIntoAFolderInUseIsRefused) {
  TempDir dir;
  write_small_sweep(dir);
  fs::create_directories(dir.at("out"));
  const int fd = ::open(dir.at("out/.omnilearn.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  for (const char* mode : {"--resume", "--force", "--gather"}) {
    SCOPED_TRACE(mode);
    const RunResult r =
        run_omnilearn({"sweep", dir.at("small.yaml"), "--quiet", mode, "--out", dir.at("out")}, dir.path());
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "in use by another omnilearn run")) << r.err;
  }
  ::close(fd);
  EXPECT_FALSE(fs::exists(dir.at("out/small-uniform")));
}

// --resume skips the points whose summary.json is complete and runs the others again.
TEST(CliRunFolder, SweepResumeRunsOnlyUnfinishedPoints) {
  TempDir dir;
  write_small_sweep(dir);
  const std::vector<std::string> sweep{"sweep", dir.at("small.yaml"), "--quiet", "--jobs", "1", "--out", dir.at("out")};
  RunResult r = run_omnilearn(sweep, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Point small-omnilearn "was interrupted": no summary.json. Point small-uniform is finished: mark its files.
  fs::remove(dir.at("out/small-omnilearn/summary.json"));
  dir.write("out/small-uniform/iterations.csv", "marker\n");
  std::vector<std::string> resume = sweep;
  resume.push_back("--resume");
  r = run_omnilearn(resume, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "1 of 2 points are finished, running 1")) << r.err;
  EXPECT_EQ(read_file(dir.at("out/small-uniform/iterations.csv")), "marker\n");  // not run again
  EXPECT_TRUE(fs::exists(dir.at("out/small-omnilearn/summary.json")));
  EXPECT_NE(read_file(dir.at("out/small-omnilearn/iterations.csv")), "");
  EXPECT_TRUE(contains(read_file(dir.at("out/sweep.csv")), "small-uniform,uniform,ok,"));
}

// A sweep stopped by SIGKILL (or a crash) cannot stop its points itself: they get SIGTERM from the kernel
// (PR_SET_PDEATHSIG) and stop as `sim` does on it, so nothing keeps running and each point's files stay valid.
TEST(CliRunFolder, ASweepKilledWithSigkillLeavesNoPointRunning) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  dir.write("endless.yaml", "name: endless\nbase: quick.yaml\nset: {workload.epochs: 1000000, outputs.timeline: true}\n"
                            "axes:\n  policy.name: [uniform, omnilearn]\n");
  Background sweep({"sweep", dir.at("endless.yaml"), "--quiet", "--jobs", "2", "--out", dir.at("out")}, dir);
  ASSERT_GT(sweep.pid(), 0);
  // Each point's sim holds its folder's lock, which names its pid.
  std::vector<pid_t> points;
  ASSERT_TRUE(wait_for([&] {
    points.clear();
    for (const char* point : {"out/endless-uniform", "out/endless-omnilearn"}) {
      std::istringstream lock(read_file(dir.at(std::string(point) + "/.omnilearn.lock")));
      long pid = 0;
      if (lock >> pid && pid > 0 && line_count(read_file(dir.at(std::string(point) + "/iterations.csv"))) > 20) {
        points.push_back(static_cast<pid_t>(pid));
      }
    }
    return points.size() == 2;
  })) << sweep.err();
  EXPECT_EQ(sweep.stop(SIGKILL), 128 + SIGKILL);
  bool stopped = true;
  for (const pid_t pid : points) {
    const bool gone = wait_for([&] { return ::kill(pid, 0) != 0 && errno == ESRCH; });
    EXPECT_TRUE(gone) << "point pid " << pid << " still runs";
    if (!gone) ::kill(pid, SIGKILL);  // a failing test leaves nothing running either
    stopped &= gone;
  }
  if (!stopped) return;
  for (const char* point : {"out/endless-uniform", "out/endless-omnilearn"}) {
    SCOPED_TRACE(point);
    expect_valid_stopped_run(dir, point);
  }
}

// Issue 12 #5: `mpirun -np 2 omnilearn sweep` without --mpi ran every point twice into the same folders.
TEST(CliRunFolder, SweepUnderAnMpiLauncherWithoutMpiIsRefused) {
  TempDir dir;
  write_small_sweep(dir);
  for (const std::string variable : {"OMPI_COMM_WORLD_SIZE=2", "PMI_SIZE=4", "PMIX_RANK=1"}) {
    SCOPED_TRACE(variable);
    const RunResult r =
        run_omnilearn({"sweep", dir.at("small.yaml"), "--quiet", "--out", dir.at("out")}, dir.path(), {variable});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, variable)) << r.err;
    EXPECT_TRUE(contains(r.err, "--mpi")) << r.err;
    EXPECT_FALSE(fs::exists(dir.at("out")));
  }
  const RunResult one = run_omnilearn({"sweep", dir.at("small.yaml"), "--quiet", "--out", dir.at("out")}, dir.path(),
                                      {"OMPI_COMM_WORLD_SIZE=1", "PMIX_RANK=0"});
  EXPECT_EQ(one.exit_code, 0) << one.err;  // a single rank is a plain run
}

}  // namespace
}  // namespace omnilearn::cli::testing
