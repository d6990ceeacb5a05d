#include "omnilearn/emulator/mps_daemon.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "omnilearn/base/subprocess.h"

extern char** environ;

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Runs `argv` with `env`, feeding `input` to its stdin; returns its exit status (waitpid's) or an error. The death
// signal holds for the control program only: the daemon that `-d` forks does not inherit it and runs until stop().
Result<int> run_with_input(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                           const std::string& input) {
  SpawnOptions options;
  options.env = env;
  return Subprocess::run(argv, options, input);
}

}  // namespace

std::string find_program(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream in(path);
    for (std::string d; std::getline(in, d, ':');) dirs.push_back(d);
  }
  dirs.insert(dirs.end(), {"/usr/bin", "/usr/local/cuda/bin"});
  for (const auto& d : dirs) {
    const std::string p = d + "/" + name;
    if (!d.empty() && ::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

Result<std::unique_ptr<MpsDaemon>> MpsDaemon::start(const MpsDaemonOptions& o) {
  if (o.base_dir.empty()) return Status::invalid_argument("MPS daemon: no base folder");
  const std::string program = o.control_program.empty() ? find_program("nvidia-cuda-mps-control") : o.control_program;
  if (program.empty() || ::access(program.c_str(), X_OK) != 0) {
    return Status::not_found("nvidia-cuda-mps-control not found (it ships with the NVIDIA driver utilities); the GPU "
                             "path needs it");
  }
  std::unique_ptr<MpsDaemon> d(new MpsDaemon());
  d->program_ = program;
  d->pipe_dir_ = fs::absolute(o.base_dir + "/mps-pipe").string();
  d->log_dir_ = fs::absolute(o.base_dir + "/mps-log").string();
  d->extra_env_ = o.extra_env;
  d->stop_timeout_s_ = o.stop_timeout_s;
  std::error_code ec;
  fs::create_directories(d->pipe_dir_, ec);
  if (!ec) fs::create_directories(d->log_dir_, ec);
  if (ec) return Status::io_error("MPS daemon: cannot create " + d->pipe_dir_ + ": " + ec.message());
  if (d->running()) return Status::internal("MPS daemon: one already runs with pipe folder " + d->pipe_dir_);

  // `-d` forks the daemon and returns; its stdin gets nothing.
  auto rc = run_with_input({program, "-d"}, d->daemon_env(), "");
  if (!rc) return rc.status();
  if (!(WIFEXITED(*rc) && WEXITSTATUS(*rc) == 0)) {
    d->stopped_ = true;
    return Status::internal(program + " -d failed (status " + std::to_string(*rc) + "); see " + d->log_dir_ +
                            "/control.log");
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.start_timeout_s);
  while (!d->running() || !fs::exists(d->pipe_dir_ + "/control")) {
    if (Clock::now() >= deadline) {
      (void)d->stop();
      return Status::internal("MPS daemon did not come up within " + std::to_string(o.start_timeout_s) + " s; see " +
                              d->log_dir_ + "/control.log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return d;
}

MpsDaemon::~MpsDaemon() { (void)stop(); }

std::vector<std::string> MpsDaemon::daemon_env() const {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("CUDA_MPS_")) continue;
    env.emplace_back(kv);
  }
  env.push_back("CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir_);
  env.push_back("CUDA_MPS_LOG_DIRECTORY=" + log_dir_);
  env.insert(env.end(), extra_env_.begin(), extra_env_.end());
  return env;
}

std::vector<pid_t> MpsDaemon::processes() const {
  std::vector<pid_t> out;
  const std::string needle = "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir_;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string comm;
    std::getline(std::ifstream(entry.path() / "comm"), comm);
    if (!comm.starts_with("nvidia-cuda-mps")) continue;  // control daemon or MPS server
    std::ifstream env(entry.path() / "environ", std::ios::binary);
    for (std::string kv; std::getline(env, kv, '\0');) {
      if (kv == needle) {
        out.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
    }
  }
  return out;
}

Status MpsDaemon::stop() {
  if (stopped_) return Status::ok();
  stopped_ = true;
  Status result;
  if (running()) {
    auto rc = run_with_input({program_}, daemon_env(), "quit\n");
    if (!rc) result = rc.status();
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(stop_timeout_s_);
  while (running() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::vector<pid_t> left = processes();
  for (pid_t pid : left) ::kill(pid, SIGKILL);
  if (!left.empty() && result.is_ok()) {
    result = Status::internal("MPS daemon did not quit within " + std::to_string(stop_timeout_s_) +
                              " s; killed " + std::to_string(left.size()) + " process(es)");
  }
  return result;
}

std::vector<std::string> MpsDaemon::client_env(int active_thread_percentage,
                                               const std::optional<std::string>& pinned_mem_limit) const {
  std::vector<std::string> env = {"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir_, "CUDA_MPS_LOG_DIRECTORY=" + log_dir_,
                                  "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" +
                                      std::to_string(std::clamp(active_thread_percentage, 1, 100))};
  if (pinned_mem_limit) env.push_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + *pinned_mem_limit);
  return env;
}

}  // namespace omnilearn::emulator
