// CsvTable: a CSV table with a header read row by row, columns found by name and cells read as typed values, every
// error naming the file and line (and the column). The one reader of run-folder tables (jobs.csv, allocations.csv,
// iterations.csv, evaluations.csv) outside Python; built on csv_reader.h's line reader and field splitter.
// Not thread-safe: one reader per caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::traces {

// What to do with a row whose field count is not the header's.
enum class RaggedRows {
  kError,  // an error naming the file and line (a finished table)
  kSkip,   // skip it (a table another process is still writing: its last row may be cut short)
};

class CsvTable {
 public:
  // Opens `path` and reads its header: the first line that is neither empty nor a '#' comment. Errors: the file
  // cannot be read; it has no header ("path: no header").
  static Result<CsvTable> open(const std::string& path, RaggedRows ragged = RaggedRows::kError);

  const std::string& path() const { return lines_.path(); }
  const std::vector<std::string>& header() const { return header_; }
  // The index of column `name`, or an error "path: no column 'name'".
  Result<std::size_t> column(std::string_view name) const;
  // The indices of `names`, in their order; the first missing one is an error as column() says.
  Result<std::vector<std::size_t>> columns(std::initializer_list<std::string_view> names) const;
  // The index of column `name`, or nothing (an optional column).
  std::optional<std::size_t> find(std::string_view name) const { return find_column(header_, name); }

  // Moves to the next row (empty and '#' lines skipped) and returns true, or returns false at the end or at an
  // error, which status() then holds.
  bool next();
  // Ok, or the error that ended next() (a ragged row under RaggedRows::kError).
  const Status& status() const { return status_; }
  std::size_t line_number() const { return lines_.line_number(); }

  // The current row's cells (column < header().size()).
  const std::string& text(std::size_t column) const { return fields_.at(column); }
  // A finite number, else "path:line: name: expected a number, got 'cell'".
  Result<double> number(std::size_t column) const;
  // Nothing for an empty cell (not known), else number().
  Result<std::optional<double>> optional_number(std::size_t column) const;
  // A whole number (an integer written as one, e.g. "12" or "12.0"), else an error as number() names it.
  Result<std::int64_t> integer(std::size_t column) const;
  // "path:line: what" for the current row.
  Status error(const std::string& what) const { return lines_.error(what); }

 private:
  CsvTable(LineReader lines, RaggedRows ragged) : lines_(std::move(lines)), ragged_(ragged) {}
  // The next line that is neither empty nor a comment, split; false at the end.
  bool next_fields();

  LineReader lines_;
  RaggedRows ragged_;
  std::vector<std::string> header_;
  std::vector<std::string> fields_;
  Status status_;
};

}  // namespace omnilearn::traces
