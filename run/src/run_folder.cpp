#include "omnilearn/run/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "omnilearn/base/atomic_file.h"

namespace omnilearn::run {
namespace {

namespace fs = std::filesystem;

std::string errno_text() { return std::strerror(errno); }

// A plain name of an entry directly inside a folder: nothing that could reach outside it.
bool is_plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// The pid recorded in a lock file (what its holder wrote), or "?" when it cannot be read.
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? std::string("?") : pid;
}

// Removes `dir`/`name` when it is a file or a symlink (never a folder); a missing one is fine.
Status remove_file(const fs::path& dir, const std::string& name) {
  const fs::path p = dir / name;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);
  if (ec || !fs::exists(st) || fs::is_directory(st)) return Status::ok();
  if (!fs::remove(p, ec) && ec) return Status::io_error(p.string() + ": cannot remove: " + ec.message());
  return Status::ok();
}

// Removes the known run files inside the sub-folder `name` (under its own lock), then the sub-folder if empty.
Status clear_own_folder(const fs::path& dir, const std::string& name) {
  if (!is_plain_name(name)) return Status::ok();
  const fs::path p = dir / name;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(p, ec))) return Status::ok();
  {
    RunFolderOptions inner;
    inner.reuse = FolderReuse::kReplace;
    auto claimed = RunFolder::claim(p.string(), inner);
    if (!claimed) return claimed.status();
  }                   // releases the sub-folder's lock and removes its lock file
  fs::remove(p, ec);  // fails, harmlessly, when something else is left there
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& run_folder_files() {
  static const std::vector<std::string> kFiles = {"manifest.json", "iterations.csv", "plans.csv", "availability.csv",
                                                  "evaluations.csv", "summary.json", "timeline.json", "energy.csv",
                                                  "barriers.csv",  // the ASP server's barriers (pull: per-epoch)
                                                  // the testbed's one-host FileStore, and its workers' settings
                                                  ".rendezvous", "config.json",
                                                  // several jobs (jobs_run_folder.h)
                                                  "jobs.csv", "allocations.csv", "workload.csv"};
  return kFiles;
}

Result<std::unique_ptr<RunFolder>> RunFolder::claim(const std::string& dir, const RunFolderOptions& options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::io_error(dir + ": cannot create the run folder: " + ec.message());
  const fs::path root(dir);
  const std::string lock_path = (root / kRunFolderLock).string();
  std::unique_ptr<RunFolder> folder(new RunFolder());
  folder->dir_ = dir;
  // The holder removes the lock file when it ends: a lock taken on a file that was removed (or replaced) meanwhile
  // is no lock, so take it again on the file now at that path.
  for (int attempt = 0; folder->fd_ < 0; ++attempt) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::io_error(lock_path + ": cannot open the lock file: " + errno_text());
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string pid = holder_pid(fd);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        return Status::io_error(dir + ": in use by another omnilearn run (pid " + pid + " holds " + lock_path +
                                "); wait for it to end or choose another --out");
      }
      return Status::io_error(lock_path + ": cannot lock: " + std::strerror(err));
    }
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      folder->fd_ = fd;
    } else {
      ::close(fd);
      if (attempt >= 100)
        return Status::io_error(lock_path + ": the lock file keeps changing; is another run starting?");
    }
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(folder->fd_, 0) != 0 ||
      ::pwrite(folder->fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Status::io_error(lock_path + ": cannot write: " + errno_text());
  }

  std::vector<std::string> held;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == kRunFolderLock || (options.ignore && options.ignore(name))) continue;
    held.push_back(name);
  }
  if (ec) return Status::io_error(dir + ": cannot list the run folder: " + ec.message());
  if (held.empty() || options.reuse == FolderReuse::kKeep) return folder;
  if (options.reuse == FolderReuse::kRefuse) {
    std::sort(held.begin(), held.end());
    std::string listed;
    for (std::size_t i = 0; i < held.size() && i < 3; ++i) listed.append(i == 0 ? "" : ", ").append(held[i]);
    if (held.size() > 3) listed.append(" and ").append(std::to_string(held.size() - 3)).append(" more");
    return Status::invalid_argument(dir + ": not empty (holds " + listed + "); " + options.remedy);
  }
  // Each known file, and the temporary file of its atomic write (a run stopped mid-write leaves one).
  const auto remove_known = [&root](const std::string& name) -> Status {
    if (!is_plain_name(name)) return Status::ok();
    OMNI_RETURN_IF_ERROR(remove_file(root, name));
    return remove_file(root, atomic_temp_path(name).string());
  };
  for (const std::string& name : run_folder_files()) OMNI_RETURN_IF_ERROR(remove_known(name));
  for (const std::string& name : options.own_files) OMNI_RETURN_IF_ERROR(remove_known(name));
  for (const std::string& name : options.own_folders) OMNI_RETURN_IF_ERROR(clear_own_folder(root, name));
  return folder;
}

RunFolder::~RunFolder() {
  if (fd_ < 0) return;
  // Unlink while holding the lock: whoever opened this file meanwhile sees it is gone once it gets the lock.
  ::unlink((fs::path(dir_) / kRunFolderLock).c_str());
  ::close(fd_);
}


}  // namespace omnilearn::run
