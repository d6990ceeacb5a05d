#include "cli/sweep_runner.h"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <map>

#include "cli/progress_bar.h"
#include "omnilearn/base/status.h"
#include "omnilearn/base/subprocess.h"

extern char** environ;

namespace omnilearn::cli {
namespace {

bool is_mpi_variable(const char* entry) {
  const std::string e(entry);
  return e.rfind("OMPI_", 0) == 0 || e.rfind("PMIX_", 0) == 0 || e.rfind("PMI_", 0) == 0;
}

// The environment handed to every point: ours, less MPI's variables when asked.
std::vector<std::string> child_environment(bool strip_mpi) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!strip_mpi || !is_mpi_variable(*e)) env.emplace_back(*e);
  }
  return env;
}

// Starts one point with its output and errors in <out>/<point>.log; no shell is involved. The point stays in this
// process's group (a terminal's Ctrl-C reaches it too), and the caller reaps it. If this process ends without
// stopping it (SIGKILL, a crash), the point gets SIGTERM and stops as `sim` does on it: nothing keeps running.
Result<pid_t> spawn_point(const PointRunOptions& o, const scenarios::SweepPoint& p,
                          const std::vector<std::string>& env) {
  SpawnOptions options;
  options.env = env;
  options.stdout_file = options.stderr_file = o.out + "/" + p.name + ".log";
  options.own_process_group = false;
  options.parent_death_signal = SIGTERM;
  auto child =
      Subprocess::start(point_command_words(o.exe, p, o.out + "/" + p.name, o.iteration_rows, o.sim_args), options);
  if (!child) {
    return Status::io_error("cannot start " + o.exe + " for point " + p.name + ": " + child.status().message());
  }
  return child->release();
}

}  // namespace

std::vector<std::string> point_command_words(const std::string& exe, const scenarios::SweepPoint& point,
                                             const std::string& run_dir, bool iteration_rows,
                                             const std::vector<std::string>& sim_args) {
  if (point.kind == scenarios::ScenarioKind::kJobs) {
    std::vector<std::string> words{exe, "jobs", "run", point.base_path, "--quiet", "--out", run_dir, "--force"};
    for (const std::string& o : point.overrides) words.insert(words.end(), {"--set", o});
    return words;
  }
  std::vector<std::string> words{exe, "sim", point.base_path, "--quiet", "--out", run_dir, "--force"};
  bool timeline_asked = false;
  for (const std::string& o : point.overrides) {
    words.insert(words.end(), {"--set", o});
    timeline_asked |= o.rfind("outputs.timeline=", 0) == 0;
  }
  if (!iteration_rows) words.push_back("--no-iterations");
  if (!timeline_asked) words.push_back("--no-timeline");
  words.insert(words.end(), sim_args.begin(), sim_args.end());
  return words;
}

std::vector<int> run_sweep_points(const std::vector<scenarios::SweepPoint>& points,
                                  const std::vector<std::size_t>& indices, const PointRunOptions& options) {
  const std::vector<std::string> env = child_environment(options.strip_mpi_environment);
  std::vector<int> exit_codes(points.size(), kPointNotRun);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  std::size_t done = 0;
  SweepProgress progress(options.label, indices.size(), options.progress);
  while (done < indices.size()) {
    while (next < indices.size() && running.size() < static_cast<std::size_t>(options.jobs)) {
      const std::size_t i = indices[next++];
      auto pid = spawn_point(options, points[i], env);
      if (pid) {
        running[*pid] = i;
      } else {
        std::cerr << "omnilearn sweep: " << pid.status().message() << "\n";
        exit_codes[i] = 127;
        ++done;
        progress.point_done(/*failed=*/true);
      }
    }
    if (running.empty()) continue;
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, 0);
    if (pid < 0 && errno == ECHILD) {  // someone else reaped our children: their outcome is lost
      for (const auto& [lost, i] : running) {
        exit_codes[i] = 127;
        progress.point_done(/*failed=*/true);
      }
      done += running.size();
      running.clear();
      continue;
    }
    if (pid < 0 || !running.contains(pid)) continue;
    const std::size_t i = running[pid];
    running.erase(pid);
    exit_codes[i] = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    ++done;
    progress.point_done(exit_codes[i] != 0);
  }
  progress.finish();
  return exit_codes;
}

}  // namespace omnilearn::cli
