#include "omnilearn/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace omnilearn {
namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::filesystem::path atomic_temp_path(const std::filesystem::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp");
}

Result<AtomicFileStream> AtomicFileStream::open(const std::string& path, unsigned mode) {
  const std::filesystem::path temp = atomic_temp_path(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return Status::io_error(path + ": cannot write " + temp.string() + ": " + errno_text());
  return AtomicFileStream(path, fd);
}

AtomicFileStream::AtomicFileStream(AtomicFileStream&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AtomicFileStream& AtomicFileStream::operator=(AtomicFileStream&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFileStream::~AtomicFileStream() { discard(); }

void AtomicFileStream::discard() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(atomic_temp_path(path_).c_str());
  fd_ = -1;
}

Status AtomicFileStream::fail(const std::string& what) {
  const std::string reason = errno_text();
  discard();
  return Status::io_error(path_ + ": " + what + " failed (" + reason + "); the previous " +
                          std::filesystem::path(path_).filename().string() + ", if any, is unchanged");
}

Status AtomicFileStream::append(std::string_view text) {
  if (fd_ < 0) return Status::io_error(path_ + ": written after it was committed or failed");
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write");
    done += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status AtomicFileStream::commit() {
  if (fd_ < 0) return Status::io_error(path_ + ": committed after it was committed or failed");
  if (::fsync(fd_) != 0) return fail("fsync");
  const std::filesystem::path target(path_);
  const std::filesystem::path temp = atomic_temp_path(target);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const std::string reason = errno_text();
    ::unlink(temp.c_str());
    return Status::io_error(path_ + ": close failed (" + reason + ")");
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string reason = errno_text();
    ::unlink(temp.c_str());
    return Status::io_error(path_ + ": rename from " + temp.string() + " failed (" + reason + ")");
  }
  // The rename is in the folder's entry list: sync the folder too, or a crash can lose it (and the file).
  const std::string folder = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    const bool synced = ::fsync(dir) == 0;
    const std::string reason = synced ? std::string() : errno_text();
    ::close(dir);
    if (!synced) return Status::io_error(path_ + ": fsync of its folder failed (" + reason + ")");
  }
  return Status::ok();
}

Status write_file_atomically(const std::string& path, std::string_view text, unsigned mode) {
  return write_file_atomically(path, {text}, mode);
}

Status write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces, unsigned mode) {
  auto stream = AtomicFileStream::open(path, mode);
  if (!stream.is_ok()) return stream.status();
  for (const std::string_view piece : pieces) OMNI_RETURN_IF_ERROR(stream->append(piece));
  return stream->commit();
}

}  // namespace omnilearn
