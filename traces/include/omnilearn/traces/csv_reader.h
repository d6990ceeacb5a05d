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

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// Reads a text file line by line (LF or CRLF), counting lines from 1.
class LineReader {
 public:
  static Result<LineReader> open(const std::string& path);
  // Fills `line` with the next line (without its end) and returns true, or returns false at the end.
  bool next(std::string& line);
  std::size_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  // "path:line: what" for the current line.
  Status error(const std::string& what) const;

 private:
  LineReader(std::string path, std::ifstream in) : path_(std::move(path)), in_(std::move(in)) {}
  std::string path_;
  std::ifstream in_;
  std::size_t line_number_ = 0;
};

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
