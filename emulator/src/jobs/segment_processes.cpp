#include "omnilearn/emulator/segment_processes.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "omnilearn/base/format.h"
#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/testbed_config.h"
#include "omnilearn/traces/csv_table.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;
constexpr double kCoreUnit = 0.01;  // a worker node's `cores` count hundredths of a host core (emulator.cpu_per_core)

long long wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The processes `pid` started (its workers, for a launcher).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t c = 0; in >> c;) out.push_back(c);
  }
  return out;
}

}  // namespace

struct ProcessSegmentRunner::Segment {
  std::size_t job = 0;
  std::string run_dir;
  std::optional<Subprocess> launcher;
  long long spawned_ns = 0;  // when the launcher was started
  long long t0_ns = -1;      // the run's start (config.json), once this launcher has written it
};

Result<std::string> segment_scenario_yaml(const SegmentJob& job, const std::vector<std::string>& kinds,
                                          std::int64_t samples, const ProcessSegmentOptions& options,
                                          const std::string& name) {
  if (!job.model.starts_with("lenet")) {
    return Status::invalid_argument("job '" + job.name + "': model '" + job.model +
                                    "'; the testbed's jobs train LeNet (a model named lenet...)");
  }
  std::ostringstream y;
  y << "# One segment of job " << job.name << " (omnilearn jobs emulate).\n"
    << "name: " << nlohmann::json(name).dump() << "\nseed: " << job.seed << "\nmode: bsp\ncluster:\n  topology: star\n"
    << "  nodes:\n";
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const auto cores = options.kind_cores.find(kinds[k]);
    if (cores == options.kind_cores.end())
      return Status::invalid_argument("device kind '" + kinds[k] + "': no CPU share");
    const long long units = std::max(1LL, std::llround(cores->second / kCoreUnit));
    y << "    - {name: w" << k << ", cores: " << units << ", core_speed: 1e9, bandwidth: 10GBps, latency: 1us}\n";
  }
  y << "  backbone: {bandwidth: 10GBps, latency: 1us}\n"
    << "workload:\n  model: {name: lenet, parameters: 22310, flops_per_sample: 2.3e6, flops_per_iteration: 2.2e5}\n"
    << "  dataset: fashion-mnist\n  global_batch: " << job.global_batch << "\n  sample_budget: " << samples << "\n"
    << "policy: {name: " << nlohmann::json(job.batch_policy).dump()
    << "}\n"
    // Paused workers report nothing: no stall check; no evaluation (it would stop the clock's steps).
    << "emulator: {cpu_per_core: " << kCoreUnit << ", cpu_period_s: " << format_g(options.cpu_period_s)
    << ", sample_cost_s: " << format_g(options.sample_cost_s) << ", stall_timeout_s: 0, eval_every: 0}\n"
    << "outputs: {dir: runs, timeline: false}\n";
  return y.str();
}

ProcessSegmentRunner::ProcessSegmentRunner(std::vector<SegmentJob> jobs, ProcessSegmentOptions options)
    : jobs_(std::move(jobs)), options_(std::move(options)) {
  running_.resize(jobs_.size());
  segments_.assign(jobs_.size(), 0);
  done_.resize(jobs_.size());
  if (!options_.log) options_.log = [](const std::string&) {};
}

ProcessSegmentRunner::~ProcessSegmentRunner() { stop_all(); }

Seconds ProcessSegmentRunner::to_emulated(long long wall_ns) const {
  Seconds last = 0.0;
  for (const Interval& i : clock_) {
    if (wall_ns < i.wall_a_ns) return i.emu_a_s;  // during the pause before it
    if (i.wall_b_ns < 0 || wall_ns <= i.wall_b_ns) return i.emu_a_s + 1e-9 * static_cast<double>(wall_ns - i.wall_a_ns);
    last = i.emu_a_s + 1e-9 * static_cast<double>(i.wall_b_ns - i.wall_a_ns);
  }
  return last;
}

void ProcessSegmentRunner::signal_workers(const Segment& s, int sig) const {
  if (!s.launcher || s.launcher->exited()) return;
  for (const pid_t p : children_of(s.launcher->pid())) ::kill(p, sig);
}

void ProcessSegmentRunner::signal_all(int sig) const {
  for (const auto& s : running_) {
    if (s) signal_workers(*s, sig);
  }
}

ProcessSegmentRunner::Counted ProcessSegmentRunner::count(const Segment& s, long long limit_ns) const {
  Counted c;
  if (s.t0_ns < 0) return c;
  // Read while the segment writes it: a last row cut short is skipped, and so is a table not yet begun.
  auto table = traces::CsvTable::open((fs::path(s.run_dir) / "iterations.csv").string(), traces::RaggedRows::kSkip);
  if (!table) return c;
  auto cols = table->columns({"start_s", "compute_s", "comm_s", "wait_s", "batch", "step"});
  if (!cols) return c;
  std::set<long long> steps;
  while (table->next()) {
    double v[6];
    bool ok = true;
    for (std::size_t i = 0; i < 6; ++i) {
      const auto x = table->number((*cols)[i]);
      ok = ok && x.is_ok();
      v[i] = x.is_ok() ? *x : 0.0;
    }
    if (!ok) continue;
    const long long end_ns = s.t0_ns + std::llround((v[0] + v[1] + v[2] + v[3]) * 1e9);
    if (end_ns > limit_ns) continue;
    c.samples += v[4];
    steps.insert(std::llround(v[5]));
    c.last_end_ns = std::max(c.last_end_ns, end_ns);
  }
  c.steps = static_cast<std::int64_t>(steps.size());
  return c;
}

Status ProcessSegmentRunner::start(const SegmentStart& st, Seconds now_s) {
  const SegmentJob& job = jobs_[st.job];
  const std::string name = job.name + "-" + std::to_string(segments_[st.job]++);
  const auto samples = static_cast<std::int64_t>(std::ceil(st.remaining_samples));
  auto yaml = segment_scenario_yaml(job, st.kinds, std::max<std::int64_t>(1, samples), options_, name);
  if (!yaml) return yaml.status();
  const fs::path base = fs::path(options_.dir) / name;
  const std::string yaml_path = base.string() + ".yaml";
  OMNI_RETURN_IF_ERROR(traces::write_text_atomically(yaml_path, *yaml));
  auto seg = std::make_unique<Segment>();
  seg->job = st.job;
  seg->run_dir = base.string();
  SpawnOptions spawn;
  spawn.stdout_file = base.string() + ".log";
  spawn.stderr_file = spawn.stdout_file;
  // In this process's group, so that a terminal's Ctrl-C reaches the launcher (it stops its workers and removes its
  // cgroups); if this process dies, the launcher gets SIGTERM and does the same.
  spawn.own_process_group = false;
  spawn.parent_death_signal = SIGTERM;
  std::vector<std::string> argv = {options_.omnilearn, "emulate", yaml_path, "--out", seg->run_dir};
  if (options_.replace) argv.push_back("--force");
  seg->spawned_ns = wall_now_ns();
  auto child = Subprocess::start(argv, spawn);
  if (!child) return child.status().with_context("starting segment " + name);
  seg->launcher.emplace(std::move(child).value());
  std::string kinds;
  for (const std::string& k : st.kinds) kinds += (kinds.empty() ? "" : "+") + k;
  options_.log("t=" + format_g(now_s, 4) + " s: " + job.name + " starts on " + kinds + " (" + std::to_string(samples) +
               " samples left; " + seg->run_dir + ")");
  running_[st.job] = std::move(seg);
  return Status::ok();
}

Status ProcessSegmentRunner::finish(Segment& s, bool stopped) {
  const int status = s.launcher->status();
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!(code == 0 || (stopped && code == 128 + SIGINT))) {
    return Status::internal("job '" + jobs_[s.job].name + "': its segment's launcher " + describe_exit(status) +
                            "; see " + s.run_dir + ".log");
  }
  // Steps that ended on the emulated clock: all of a completed run; up to the last pause for a stopped one.
  long long limit = std::numeric_limits<long long>::max();
  if (stopped && !clock_.empty() && clock_.back().wall_b_ns >= 0) limit = clock_.back().wall_b_ns;
  const Counted c = count(s, limit);
  JobProgress& p = done_[s.job];
  p.samples += c.samples;
  p.steps += c.steps;
  if (!stopped) p.end_s = to_emulated(c.last_end_ns);
  return Status::ok();
}

Status ProcessSegmentRunner::stop(std::size_t job) {
  if (job >= running_.size() || !running_[job]) return Status::ok();
  Segment& s = *running_[job];
  signal_workers(s, SIGCONT);
  if (!s.launcher->exited()) ::kill(s.launcher->pid(), SIGINT);
  s.launcher->wait();
  const Status st = finish(s, /*stopped=*/true);
  options_.log(jobs_[job].name + " stopped (" + format_g(done_[job].samples, 6) + " samples trained so far)");
  running_[job].reset();
  return st;
}

Status ProcessSegmentRunner::run(Seconds now_s, Seconds until_s, const std::vector<SegmentStart>& starts) {
  // Start-up off the clock: everything else stays paused until each new segment has made its first step.
  for (const SegmentStart& s : starts) OMNI_RETURN_IF_ERROR(start(s, now_s));
  const long long deadline = wall_now_ns() + std::llround(options_.startup_timeout_s * 1e9);
  // All new segments start up together; each is paused as soon as its first step is done (that step, under a
  // tenth of a second, is the only training off the clock).
  std::vector<std::size_t> pending;
  for (const SegmentStart& st : starts) pending.push_back(st.job);
  while (!pending.empty()) {
    for (auto it = pending.begin(); it != pending.end();) {
      Segment& s = *running_[*it];
      if (s.t0_ns < 0) {
        auto config = read_testbed_config((fs::path(s.run_dir) / kTestbedConfigFile).string());
        // An earlier run's config.json (with --force) is older than this launcher: its rows are not this run's.
        if (config && config->t0_ns >= s.spawned_ns) s.t0_ns = config->t0_ns;
      }
      const bool stepped = s.t0_ns >= 0 && fs::exists(fs::path(s.run_dir) / "iterations.csv") &&
                           count(s, std::numeric_limits<long long>::max()).steps > 0;
      if (stepped || s.launcher->poll_exit()) {
        signal_workers(s, SIGSTOP);  // it waits for the others
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    if (pending.empty()) break;
    if (options_.stop_requested && options_.stop_requested()) return Status::internal("stopped on request");
    if (wall_now_ns() > deadline) {
      return Status::internal("job '" + jobs_[pending.front()].name + "': no step " +
                              format_g(options_.startup_timeout_s) + " s after its segment started; see " +
                              running_[pending.front()]->run_dir + ".log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Interval interval;
  interval.wall_a_ns = wall_now_ns();
  interval.emu_a_s = now_s;
  clock_.push_back(interval);
  signal_all(SIGCONT);
  Status failure;
  for (;;) {
    bool any = false;
    for (auto& s : running_) {
      if (!s) continue;
      if (s->launcher->poll_exit()) {
        if (failure.is_ok()) failure = finish(*s, /*stopped=*/false);
        if (done_[s->job].end_s)
          options_.log(jobs_[s->job].name + " ends at t=" + format_g(*done_[s->job].end_s, 5) + " s");
        s.reset();
        continue;
      }
      any = true;
    }
    if (!failure.is_ok() || !any) break;
    const Seconds emu = now_s + 1e-9 * static_cast<double>(wall_now_ns() - interval.wall_a_ns);
    if (emu >= until_s) break;
    if (options_.stop_requested && options_.stop_requested()) {
      failure = Status::internal("stopped on request");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  signal_all(SIGSTOP);
  clock_.back().wall_b_ns = wall_now_ns();
  return failure;
}

JobProgress ProcessSegmentRunner::progress(std::size_t job) const {
  JobProgress p = done_[job];
  if (running_[job]) {
    const Counted c =
        count(*running_[job], clock_.empty() || clock_.back().wall_b_ns < 0 ? std::numeric_limits<long long>::max()
                                                                            : clock_.back().wall_b_ns);
    p.samples += c.samples;
    p.steps += c.steps;
  }
  return p;
}

void ProcessSegmentRunner::stop_all() {
  for (auto& s : running_) {
    if (!s || !s->launcher) continue;
    signal_workers(*s, SIGCONT);
    if (!s->launcher->exited()) ::kill(s->launcher->pid(), SIGINT);
  }
  for (auto& s : running_) {
    if (!s || !s->launcher) continue;
    // The launcher stops its workers within its grace period; SIGTERM if it has not after 60 s (SIGKILL, from the
    // Subprocess's destructor, would leave its cgroups to `omnilearn emulate --cleanup`).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!s->launcher->poll_exit() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!s->launcher->exited()) {
      ::kill(s->launcher->pid(), SIGTERM);
      s->launcher->wait();
    }
    s.reset();
  }
}

}  // namespace omnilearn::emulator
