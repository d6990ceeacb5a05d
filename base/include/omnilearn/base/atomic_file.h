// Replacing a file atomically: the one writer every module uses for the files it writes (run folders, traces, job
// files, sweep tables, generated scenarios), so that a reader, or a run stopped mid-write, never sees part of one.
// Stateless: thread-safe (two writers of one path race on the rename, as with any file).
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

}  // namespace omnilearn
