#include "omnilearn/traces/text_file.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "omnilearn/base/atomic_file.h"

namespace omnilearn::traces {

std::string comment_lines(std::string_view comment) {
  std::string out;
  std::size_t start = 0;
  while (start < comment.size()) {
    std::size_t end = comment.find('\n', start);
    if (end == std::string_view::npos) end = comment.size();
    out += "# ";
    out += comment.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string shortest_number(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

Status write_text_atomically(const std::string& path, std::string_view text) {
  return write_file_atomically(path, text);
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error(path + ": cannot open for reading");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::io_error(path + ": read failed");
  return buf.str();
}

}  // namespace omnilearn::traces
