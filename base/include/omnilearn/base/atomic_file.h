// Replacing a file atomically: the one writer every module uses for the files it writes (run folders, traces, job
// files, sweep tables, generated scenarios), so that a reader, or a run stopped mid-write, never sees part of one.
// write_file_atomically is stateless: thread-safe (two writers of one path race on the rename, as with any file). An
// AtomicFileStream is one writer's: not thread-safe.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

#include "omnilearn/base/status.h"

namespace omnilearn {

// The temporary file write_file_atomically writes before the rename: `<dir>/.<name>.tmp` (hidden, beside `path`).
std::filesystem::path atomic_temp_path(const std::filesystem::path& path);

// Writes `text` to `path` so that `path` holds either its old content or all of `text`, never a part: the text goes
// to atomic_temp_path(path), is flushed to disk (fsync), then renamed over `path`, and the folder is synced. Every
// write, the fsync and the rename are checked; on error the temporary file is removed and the message names `path`
// and the system's reason. `mode` is a new file's permission bits before the umask (0755 for a script).
Status write_file_atomically(const std::string& path, std::string_view text, unsigned mode = 0644);
// The same with the text in pieces, written one after the other (a large text and its last newline, without a copy
// that joins them).
Status write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces,
                             unsigned mode = 0644);

// The same for a file written piece by piece (too large to hold): append() writes to atomic_temp_path(path), commit()
// syncs it and renames it over `path`. Until commit, `path` is unchanged; a stream destroyed uncommitted removes its
// temporary file. Errors name `path` and the system's reason; after one, the stream is closed and its file removed.
class AtomicFileStream {
 public:
  static Result<AtomicFileStream> open(const std::string& path, unsigned mode = 0644);
  AtomicFileStream(AtomicFileStream&& other) noexcept;
  AtomicFileStream& operator=(AtomicFileStream&& other) noexcept;
  AtomicFileStream(const AtomicFileStream&) = delete;
  AtomicFileStream& operator=(const AtomicFileStream&) = delete;
  ~AtomicFileStream();

  Status append(std::string_view text);
  Status commit();
  const std::string& path() const { return path_; }

 private:
  AtomicFileStream(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status fail(const std::string& what);  // closes, removes the temporary file, names the reason
  void discard();

  std::string path_;
  int fd_ = -1;
};

}  // namespace omnilearn
