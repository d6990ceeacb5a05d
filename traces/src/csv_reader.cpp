#include "omnilearn/traces/csv_reader.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <utility>

namespace omnilearn::traces {

Result<LineReader> LineReader::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error(path + ": cannot open for reading");
  return LineReader(path, std::move(in));
}

bool quote_open(std::string_view text) { return std::count(text.begin(), text.end(), '"') % 2 == 1; }

bool LineReader::next(std::string& line) {
  if (!status_.is_ok() || !std::getline(in_, line)) return false;
  record_line_ = ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::string more;
  for (bool open = quote_open(line); open; open ^= quote_open(more)) {  // a quoted field spans lines
    if (line.size() > limits::kMaxRecordBytes) {
      status_ = error("a record longer than " + std::to_string(limits::kMaxRecordBytes) +
                      " bytes (a quoted field still open); expected each quote closed");
      return false;
    }
    if (!std::getline(in_, more)) {
      status_ = error("a quoted field is never closed; expected a closing '\"' before the end of the file");
      return false;
    }
    ++line_number_;
    if (!more.empty() && more.back() == '\r') more.pop_back();
    line += '\n';
    line += more;
  }
  return true;
}

Status LineReader::first_record(std::string& line, std::string_view expected) {
  if (next(line)) return Status::ok();
  if (!status_.is_ok()) return status_;
  return error("file is empty; expected " + std::string(expected));
}

Status LineReader::error(const std::string& what) const {
  return Status::parse_error(path_ + ":" + std::to_string(record_line_) + ": " + what);
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_fields(std::string_view line, char delimiter) {
  std::vector<std::string> out;
  std::string field;
  // Whitespace is trimmed around a field but kept inside quotes: [keep_begin, keep_end) is the part from the
  // first to the last quoted or non-blank character.
  std::size_t keep_begin = std::string::npos;
  std::size_t keep_end = 0;
  auto keep = [&](char c) {
    if (keep_begin == std::string::npos) keep_begin = field.size();
    field.push_back(c);
    keep_end = field.size();
  };
  auto finish = [&] {
    out.push_back(keep_begin == std::string::npos ? std::string() : field.substr(keep_begin, keep_end - keep_begin));
    field.clear();
    keep_begin = std::string::npos;
    keep_end = 0;
  };
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        keep('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        keep(c);
      }
    } else if (c == '"') {
      quoted = true;
      if (keep_begin == std::string::npos) keep_begin = field.size();  // "" is an empty, quoted field
    } else if (c == delimiter) {
      finish();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      field.push_back(c);
    } else {
      keep(c);
    }
  }
  finish();
  return out;
}

std::string quote_field(std::string_view field, char delimiter) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  const bool plain = field.find_first_of(std::string{delimiter, '"', '\r', '\n'}) == std::string_view::npos &&
                     (field.empty() || (!blank(field.front()) && !blank(field.back())));
  if (plain) return std::string(field);
  std::string out = "\"";
  for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::optional<double> parse_double(std::string_view field) {
  field = trim(field);
  if (field.empty()) return std::nullopt;
  if (field.front() == '+') field.remove_prefix(1);
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || ptr != field.data() + field.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

// Parses an unsigned integer of 1..max_digits digits at s[pos], advancing pos.
std::optional<int> take_int(std::string_view s, std::size_t& pos, std::size_t max_digits) {
  int v = 0;
  std::size_t n = 0;
  while (pos < s.size() && n < max_digits && s[pos] >= '0' && s[pos] <= '9') {
    v = v * 10 + (s[pos] - '0');
    ++pos;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return v;
}

bool take_char(std::string_view s, std::size_t& pos, char c) {
  if (pos < s.size() && s[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

std::optional<Seconds> to_seconds(int y, int mo, int d, int h, int mi, double sec) {
  using namespace std::chrono;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec >= 61.0) return std::nullopt;
  const auto days = sys_days(ymd).time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
}

}  // namespace

std::optional<Seconds> parse_iso_datetime(std::string_view field) {
  field = trim(field);
  std::size_t p = 0;
  const auto y = take_int(field, p, 4);
  if (!y || !take_char(field, p, '-')) return std::nullopt;
  const auto mo = take_int(field, p, 2);
  if (!mo || !take_char(field, p, '-')) return std::nullopt;
  const auto d = take_int(field, p, 2);
  if (!d || !(take_char(field, p, ' ') || take_char(field, p, 'T'))) return std::nullopt;
  const auto h = take_int(field, p, 2);
  if (!h || !take_char(field, p, ':')) return std::nullopt;
  const auto mi = take_int(field, p, 2);
  if (!mi || !take_char(field, p, ':')) return std::nullopt;
  const auto sec = parse_double(field.substr(p));
  if (!sec || *sec < 0.0) return std::nullopt;
  return to_seconds(*y, *mo, *d, *h, *mi, *sec);
}

std::optional<Seconds> parse_us_datetime(std::string_view field) {
  field = trim(field);
  std::size_t p = 0;
  const auto mo = take_int(field, p, 2);
  if (!mo || !take_char(field, p, '/')) return std::nullopt;
  const auto d = take_int(field, p, 2);
  if (!d || !take_char(field, p, '/')) return std::nullopt;
  const auto y = take_int(field, p, 4);
  if (!y || !take_char(field, p, ' ')) return std::nullopt;
  const auto h = take_int(field, p, 2);
  if (!h || !take_char(field, p, ':')) return std::nullopt;
  const auto mi = take_int(field, p, 2);
  if (!mi || p != field.size()) return std::nullopt;
  return to_seconds(*y, *mo, *d, *h, *mi, 0.0);
}

std::optional<std::size_t> find_column(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  return std::nullopt;
}

}  // namespace omnilearn::traces
