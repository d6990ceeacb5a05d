#include "omnilearn/traces/csv_table.h"

#include <cmath>
#include <utility>

namespace omnilearn::traces {

Result<CsvTable> CsvTable::open(const std::string& path, RaggedRows ragged) {
  auto lines = LineReader::open(path);
  if (!lines) return lines.status();
  CsvTable t(std::move(lines).value(), ragged);
  if (!t.next_fields())
    return t.lines_.status().is_ok() ? Status::parse_error(path + ": no header") : t.lines_.status();
  t.header_ = std::move(t.fields_);
  t.fields_.clear();
  return t;
}

Result<std::size_t> CsvTable::column(std::string_view name) const {
  if (auto c = find(name)) return *c;
  return Status::parse_error(path() + ": no column '" + std::string(name) + "'");
}

Result<std::vector<std::size_t>> CsvTable::columns(std::initializer_list<std::string_view> names) const {
  std::vector<std::size_t> out;
  for (const std::string_view name : names) {
    auto c = column(name);
    if (!c) return c.status();
    out.push_back(*c);
  }
  return out;
}

bool CsvTable::next_fields() {
  for (std::string line; lines_.next(line);) {
    if (trim(line).empty() || line.starts_with("#")) continue;
    fields_ = split_fields(line);
    return true;
  }
  return false;
}

bool CsvTable::next() {
  if (!status_.is_ok()) return false;
  while (next_fields()) {
    if (fields_.size() == header_.size()) return true;
    if (ragged_ == RaggedRows::kSkip) continue;
    status_ =
        lines_.error(std::to_string(fields_.size()) + " fields; the header has " + std::to_string(header_.size()));
    return false;
  }
  if (!lines_.status().is_ok()) status_ = lines_.status();  // a quote never closed ends the table with its error
  fields_.clear();
  return false;
}

Result<double> CsvTable::number(std::size_t column) const {
  const std::string& cell = text(column);
  if (auto v = parse_double(cell)) return *v;
  return lines_.error(header_.at(column) + ": expected a number, got '" + cell + "'");
}

Result<std::optional<double>> CsvTable::optional_number(std::size_t column) const {
  if (trim(text(column)).empty()) return std::optional<double>();
  auto v = number(column);
  if (!v) return v.status();
  return std::optional<double>(*v);
}

Result<std::int64_t> CsvTable::integer(std::size_t column) const {
  const std::string& cell = text(column);
  const auto v = parse_double(cell);
  if (v && *v == std::floor(*v) && std::fabs(*v) < 9.0e15) return static_cast<std::int64_t>(*v);
  return lines_.error(header_.at(column) + ": expected a whole number, got '" + cell + "'");
}

}  // namespace omnilearn::traces
