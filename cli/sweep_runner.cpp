#include "cli/sweep_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <map>

#include "cli/progress_bar.h"
#include "omnilearn/base/status.h"

extern char** environ;

namespace omnilearn::cli {
namespace {

bool is_mpi_variable(const char* entry) {
  const std::string e(entry);
  return e.rfind("OMPI_", 0) == 0 || e.rfind("PMIX_", 0) == 0 || e.rfind("PMI_", 0) == 0;
}

// The environment handed to every point: ours, less MPI's variables when asked.
class ChildEnvironment {
 public:
  explicit ChildEnvironment(bool strip_mpi) {
    for (char** e = environ; *e != nullptr; ++e) {
      if (!strip_mpi || !is_mpi_variable(*e)) entries_.push_back(*e);
    }
    entries_.push_back(nullptr);
  }
  char* const* envp() const { return entries_.data(); }

 private:
  std::vector<char*> entries_;  // borrowed from `environ`, which the sweep does not change while it runs
};

// Starts one point with its output and errors in `log_path`; no shell is involved.
Result<pid_t> spawn_point(const PointRunOptions& o, const scenarios::SweepPoint& p, const ChildEnvironment& env) {
  std::vector<std::string> words = point_command_words(o.exe, p, o.out + "/" + p.name, o.iteration_rows, o.sim_args);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string log_path = o.out + "/" + p.name + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, o.exe.c_str(), &actions, nullptr, argv.data(), env.envp());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::io_error("cannot start " + o.exe + " for point " + p.name);
  return pid;
}

}  // namespace

std::vector<std::string> point_command_words(const std::string& exe, const scenarios::SweepPoint& point,
                                             const std::string& run_dir, bool iteration_rows,
                                             const std::vector<std::string>& sim_args) {
  std::vector<std::string> words{exe, "sim", point.base_path, "--quiet", "--out", run_dir, "--force"};
  for (const std::string& o : point.overrides) words.insert(words.end(), {"--set", o});
  if (!iteration_rows) words.push_back("--no-iterations");
  words.insert(words.end(), sim_args.begin(), sim_args.end());
  return words;
}

std::vector<int> run_sweep_points(const std::vector<scenarios::SweepPoint>& points,
                                  const std::vector<std::size_t>& indices, const PointRunOptions& options) {
  const ChildEnvironment env(options.strip_mpi_environment);
  std::vector<int> exit_codes(points.size(), kPointNotRun);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  std::size_t done = 0;
  const std::string total = std::to_string(indices.size());
  ProgressBar bar(options.label, options.progress);
  bar.update(0.0, "0/" + total);
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
      }
    }
    if (running.empty()) continue;
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, 0);
    if (pid < 0 && errno == ECHILD) {  // someone else reaped our children: their outcome is lost
      for (const auto& [lost, i] : running) exit_codes[i] = 127;
      done += running.size();
      running.clear();
      continue;
    }
    if (pid < 0 || !running.contains(pid)) continue;
    const std::size_t i = running[pid];
    running.erase(pid);
    exit_codes[i] = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    ++done;
    bar.update(static_cast<double>(done) / static_cast<double>(indices.size()), std::to_string(done) + "/" + total);
  }
  bar.finish();
  return exit_codes;
}

}  // namespace omnilearn::cli
