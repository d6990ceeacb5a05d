// Reading delimited text (CSV): a line reader that tracks line numbers, a quote-aware field splitter, strict number
// and date parsing. For the trace importers and for readers of run-folder tables. Stateless functions (thread-safe)
// and a reader owned by one caller.
#pragma once

#include <cstddef>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// Reads a CSV text file record by record (RFC 4180: LF or CRLF ends a record, except inside a double-quoted field,
// where it is part of the field), counting lines from 1. A record whose quote is never closed, or that grows past
// limits::kMaxRecordBytes, ends the reading: next() returns false and status() says why, naming the line where the
// record began. Callers check status() after their loop.
class LineReader {
 public:
  static Result<LineReader> open(const std::string& path);
  // Fills `line` with the next record (without its end; a quoted line break inside it is kept as LF) and returns
  // true, or returns false at the end or on an error (status()).
  bool next(std::string& line);
  // The line where the current record began (its last line: line_end()).
  std::size_t line_number() const { return record_line_; }
  std::size_t line_end() const { return line_number_; }
  const std::string& path() const { return path_; }
  // Reads the first record (a header) into `line`: an error when the reading failed (status()) or the file is empty
  // ("path:0: file is empty; expected " + `expected`, line 0: no line was read).
  Status first_record(std::string& line, std::string_view expected);
  // "path:line: what" for the current record's first line.
  Status error(const std::string& what) const;
  // Ok, or the error that ended the reading early.
  const Status& status() const { return status_; }

 private:
  LineReader(std::string path, std::ifstream in) : path_(std::move(path)), in_(std::move(in)) {}
  std::string path_;
  std::ifstream in_;
  std::size_t line_number_ = 0;
  std::size_t record_line_ = 0;
  Status status_;
};

// True when `text` leaves a double-quoted field open (an odd number of '"': a doubled quote counts twice).
bool quote_open(std::string_view text);

std::string_view trim(std::string_view s);
// Splits on `delimiter`, honouring RFC 4180 double quotes ("a, b" is one field, "" inside quotes is a quote);
// whitespace around a field is trimmed, whitespace inside quotes is kept.
std::vector<std::string> split_fields(std::string_view line, char delimiter = ',');
// `field` as one CSV field: as it is, or (when it holds `delimiter`, '"', CR or LF, or starts or ends with
// whitespace) double-quoted with each '"' doubled, as RFC 4180 says.
std::string quote_field(std::string_view field, char delimiter = ',');
// The whole (trimmed) field as a finite double, or nothing.
std::optional<double> parse_double(std::string_view field);
// Seconds since 1970-01-01 for "YYYY-MM-DD HH:MM:SS[.fff]" (no time zone), or nothing.
std::optional<Seconds> parse_iso_datetime(std::string_view field);
// Seconds since 1970-01-01 for "M/D/YYYY H:MM" (no time zone), or nothing.
std::optional<Seconds> parse_us_datetime(std::string_view field);
// The index of `name` in `header`, or nothing.
std::optional<std::size_t> find_column(const std::vector<std::string>& header, std::string_view name);

}  // namespace omnilearn::traces
