#include "omnilearn/emulator/cgroup_cleanup.h"

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> cgroup_mounts() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mounts");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string device, dir, type;
    if (!(fields >> device >> dir >> type)) continue;
    if (type != "cgroup" && type != "cgroup2") continue;
    if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
  }
  return out;
}

// `dir` and the groups below it, deepest first (rmdir order).
std::vector<fs::path> groups_deepest_first(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) { return a.native().size() > b.native().size(); });
  out.push_back(dir);
  return out;
}

void thaw(const fs::path& group) {
  std::error_code ec;
  if (fs::exists(group / "freezer.state", ec)) std::ofstream(group / "freezer.state") << "THAWED\n";
  if (fs::exists(group / "cgroup.freeze", ec)) std::ofstream(group / "cgroup.freeze") << "0\n";
}

// SIGKILLs every task in `group` once; true when it had none.
bool kill_tasks(const fs::path& group) {
  std::ifstream in(group / "cgroup.procs");
  bool empty = true;
  for (pid_t pid = 0; in >> pid;) {
    empty = false;
    ::kill(pid, SIGKILL);
  }
  return empty;
}

}  // namespace

bool launcher_alive(const LauncherId& owner) {
  if (owner.pid <= 0) return false;
  if (::kill(owner.pid, 0) != 0 && errno == ESRCH) return false;
  const auto start = process_start_ticks(owner.pid);
  if (!start || owner.start_ticks == 0) return true;  // alive, and we cannot tell whether it is the same process
  return *start == owner.start_ticks;
}

CgroupCleanup remove_stale_cgroups(const std::vector<std::string>& roots_in) {
  const std::vector<std::string> roots = roots_in.empty() ? cgroup_mounts() : roots_in;
  CgroupCleanup out;
  std::vector<fs::path> stale;
  for (const std::string& root : roots) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      const auto owner = parse_cgroup_run_folder(it->path().filename().string());
      if (owner && !launcher_alive(*owner) && it->is_directory(ec)) stale.push_back(it->path());
    }
  }
  // Thaw everywhere first: a task frozen in the freezer hierarchy ignores the SIGKILL sent from the cpu one.
  for (const fs::path& folder : stale) {
    for (const fs::path& g : groups_deepest_first(folder)) thaw(g);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (bool all_empty = false; !all_empty;) {
    all_empty = true;
    for (const fs::path& folder : stale) {
      for (const fs::path& g : groups_deepest_first(folder)) all_empty = kill_tasks(g) && all_empty;
    }
    if (all_empty || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const fs::path& folder : stale) {
    bool ok = true;
    for (const fs::path& g : groups_deepest_first(folder)) {
      if (::rmdir(g.c_str()) != 0 && errno != ENOENT) {
        ok = false;
        if (out.status.is_ok()) {
          out.status = Status::io_error("cannot remove stale cgroup " + g.string() + ": " + std::strerror(errno));
        }
      }
    }
    if (ok) out.removed.push_back(folder.string());
  }
  return out;
}

}  // namespace omnilearn::emulator
