#include "omnilearn/emulator/thread_groups.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace omnilearn::emulator {

std::vector<pid_t> own_thread_ids() {
  std::vector<pid_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    ids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Status move_thread(pid_t tid, const std::vector<std::string>& files) {
  const std::string id = std::to_string(tid);
  for (const std::string& file : files) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Status::io_error("cannot open " + file + " to move thread " + id + ": " + std::strerror(errno));
    const ssize_t n = ::write(fd, id.data(), id.size());
    const int err = errno;
    ::close(fd);
    // ESRCH: the thread ended meanwhile (nothing to move).
    if (n < 0 && err != ESRCH) return Status::io_error("cannot move thread " + id + " into " + file + ": " + std::strerror(err));
  }
  return Status::ok();
}

Status move_new_threads(const std::vector<pid_t>& before, const std::vector<std::string>& files) {
  for (const pid_t tid : own_thread_ids()) {
    if (!std::binary_search(before.begin(), before.end(), tid)) OMNI_RETURN_IF_ERROR(move_thread(tid, files));
  }
  return Status::ok();
}

pid_t current_thread_id() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

}  // namespace omnilearn::emulator
