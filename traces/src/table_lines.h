// TableLines: the lines of a table held in memory (a job file, a device table) that are neither blank nor '#'
// comments, trimmed, each with its "source:line" for error messages; for_each_row: the data rows of such a table
// under its fixed header. Private to traces/. Owned by one caller.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/status.h"
#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::traces::detail {

class TableLines {
 public:
  // `text` must outlive this reader; records end at LF (a CR before it is trimmed with the other blanks), except
  // inside a double-quoted field (RFC 4180), whose line breaks are kept. A quote never closed, or a record longer
  // than limits::kMaxRecordBytes, ends the reading: next() returns false and status() names the record's line.
  // With `comments`, next() also returns the '#' comment lines (a trace file's directives live there).
  TableLines(std::string_view text, std::string_view source, bool comments = false)
      : text_(text), source_(source), comments_(comments) {}

  // Fills `line` with the next record that is neither blank nor a comment, trimmed, and returns true; false at the
  // end or on an error (status()).
  bool next(std::string_view& line) {
    while (status_.is_ok() && pos_ < text_.size()) {
      record_line_ = ++line_number_;
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      const std::string_view first = trim(text_.substr(pos_, end - pos_));
      bool open = !first.empty() && first.front() != '#' && quote_open(first);  // a comment's quotes are text
      while (open && end < text_.size() && end - pos_ <= limits::kMaxRecordBytes) {
        const std::size_t next_end = std::min(text_.find('\n', end + 1), text_.size());
        open ^= quote_open(text_.substr(end + 1, next_end - end - 1));
        end = next_end;
        ++line_number_;
      }
      if (open) {
        status_ =
            Status::parse_error(where() +
                                (end - pos_ > limits::kMaxRecordBytes
                                     ? ": a record longer than " + std::to_string(limits::kMaxRecordBytes) + " bytes"
                                     : std::string(": a quoted field is never closed")) +
                                "; expected a closing '\"' for each opening one");
        return false;
      }
      line = trim(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      if (!line.empty() && (comments_ || line.front() != '#')) return true;
    }
    record_line_ = line_number_;
    return false;
  }

  // The line where the last record began, counting from 1, blank and comment lines included (at the end: the
  // text's line count).
  std::size_t line_number() const { return record_line_; }
  // "source:N" for line_number().
  std::string where() const { return source_ + ":" + std::to_string(record_line_); }
  // Ok, or the error that ended the reading early.
  const Status& status() const { return status_; }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::size_t line_number_ = 0;
  std::size_t record_line_ = 0;
  bool comments_ = false;
  Status status_;
};

// Calls `row(fields, "source:line")` for each data row of a comma-separated table whose header must be `header`.
inline Status for_each_row(std::string_view text, std::string_view source, std::string_view header,
                           const std::function<Status(const std::vector<std::string>&, const std::string&)>& row) {
  const std::size_t columns = static_cast<std::size_t>(std::count(header.begin(), header.end(), ',')) + 1;
  bool have_header = false;
  std::size_t rows = 0;
  detail::TableLines lines(text, source);
  std::string_view line;
  while (lines.next(line)) {
    const std::string where = lines.where();
    const std::vector<std::string> f = split_fields(line);
    if (!have_header) {
      std::string joined;
      for (const std::string& c : f) joined += (joined.empty() ? "" : ",") + c;
      if (joined != header) {
        return Status::parse_error(where + ": header '" + std::string(line.substr(0, 200)) + "' is wrong; expected '" +
                                   std::string(header) + "'");
      }
      have_header = true;
      continue;
    }
    if (f.size() != columns) {
      return Status::parse_error(where + ": row has " + std::to_string(f.size()) + " fields; expected " +
                                 std::to_string(columns) + " (" + std::string(header) + ")");
    }
    OMNI_RETURN_IF_ERROR(row(f, where));
    ++rows;
  }
  OMNI_RETURN_IF_ERROR(lines.status());
  if (rows == 0) {
    return Status::parse_error(lines.where() + ": no rows; expected the header '" + std::string(header) +
                               "' and at least one row");
  }
  return Status::ok();
}

// "source:line: field 'value' is not valid; expected ...".
inline Status bad(const std::string& where, std::string_view field, const std::string& value,
                  std::string_view expected) {
  return Status::parse_error(where + ": " + std::string(field) + " '" + value + "' is not valid; expected " +
                             std::string(expected));
}

// The largest whole number a table may hold (counts, degrees, layers, bytes): exact in a double.
inline constexpr double kMaxWhole = 1e15;

// `value` as a whole number from `least` to kMaxWhole, or an error naming the field.
inline Result<std::int64_t> whole(const std::string& where, std::string_view field, const std::string& value,
                                  std::int64_t least) {
  const std::optional<double> v = parse_double(value);
  if (!v || *v != std::floor(*v) || *v < static_cast<double>(least) || *v > kMaxWhole) {
    return bad(where, field, value, "a whole number >= " + std::to_string(least));
  }
  return static_cast<std::int64_t>(*v);
}

// `value` as a finite number >= 0, or an error naming the field.
inline Result<double> non_negative(const std::string& where, std::string_view field, const std::string& value) {
  const std::optional<double> v = parse_double(value);
  if (!v || *v < 0.0) return bad(where, field, value, "a number >= 0");
  return *v;
}

}  // namespace omnilearn::traces::detail
