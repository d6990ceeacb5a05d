// Writing the traces module's text files: comment lines, numbers in their shortest exact form and files replaced
// atomically.
// Stateless functions: thread-safe (two writers of one path race on the rename, as with any file).
#pragma once

#include <string>
#include <string_view>

#include "omnilearn/base/status.h"

namespace omnilearn::traces {

// Each line of `comment` (split at LF) as a "# " line ending in LF, for the top of a file; "" for an empty comment.
std::string comment_lines(std::string_view comment);

// `v` in the shortest form that reads back as the same double ("0.1", "1e+20", "3").
std::string shortest_number(double v);

// omnilearn::write_file_atomically (base/atomic_file.h: the project's one atomic writer) under the name the traces
// module's writers use: a reader never sees a half-written file; on failure `path` is left as it was.
Status write_text_atomically(const std::string& path, std::string_view text);

// The whole file at `path` as text, or an I/O error naming it.
Result<std::string> read_text_file(const std::string& path);

}  // namespace omnilearn::traces
