// TableLines: the lines of a table held in memory (a job file, a device table) that are neither blank nor '#'
// comments, trimmed, each with its "source:line" for error messages. Private to traces/. Owned by one caller.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::traces::detail {

class TableLines {
 public:
  // `text` must outlive this reader; lines end at LF (a CR before it is trimmed with the other blanks).
  TableLines(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  // Fills `line` with the next line that is neither blank nor a comment, trimmed, and returns true; false at the end.
  bool next(std::string_view& line) {
    while (pos_ < text_.size()) {
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      line = trim(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      ++line_number_;
      if (!line.empty() && line.front() != '#') return true;
    }
    return false;
  }

  // Lines passed so far, counting from 1, blank and comment lines included (at the end: the text's line count).
  std::size_t line_number() const { return line_number_; }
  // "source:N" for line_number().
  std::string where() const { return source_ + ":" + std::to_string(line_number_); }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::size_t line_number_ = 0;
};

}  // namespace omnilearn::traces::detail
