#include "omnilearn/traces/trace_file.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

constexpr std::string_view kHeader = "time_s,worker,fraction";

struct Directive {
  std::optional<Seconds> value;
  std::size_t line = 0;
};

// A `# key=value` comment: sets `matched` and fills `dir` if `key` is this directive's name.
Status parse_directive(std::string_view comment, std::string_view key, std::size_t line, const std::string& where,
                       Directive& dir, bool& matched) {
  matched = false;
  comment = trim(comment);
  if (comment.substr(0, key.size()) != key) return Status::ok();
  std::string_view rest = trim(comment.substr(key.size()));
  if (rest.empty() || rest.front() != '=') return Status::ok();
  matched = true;
  const auto v = parse_double(rest.substr(1));
  if (!v || *v < 0.0) {
    return Status::parse_error(where + ": '" + std::string(key) + "=" + std::string(trim(rest.substr(1))) +
                               "' has a bad value; expected a number of seconds >= 0");
  }
  if (dir.value) {
    return Status::parse_error(where + ": " + std::string(key) + " given twice (first on line " +
                               std::to_string(dir.line) + "); expected it at most once");
  }
  dir.value = v;
  dir.line = line;
  return Status::ok();
}

// One trace as its rows are read: the workers with their changes, the directives, the last change.
class TraceBuilder {
 public:
  explicit TraceBuilder(std::string source) : src_(std::move(source)) {}

  // One record (trimmed, not blank) that begins on `line_no`.
  Status add(std::string_view line, std::size_t line_no) {
    const std::string where = src_ + ":" + std::to_string(line_no);
    if (line.front() == '#') {
      bool matched = false;
      OMNI_RETURN_IF_ERROR(parse_directive(line.substr(1), "loop_after_s", line_no, where, loop_, matched));
      if (matched) return Status::ok();
      return parse_directive(line.substr(1), "duration_s", line_no, where, duration_, matched);
    }
    if (!have_header_) {
      std::string compact;
      for (char c : line) {
        if (c != ' ' && c != '\t') compact.push_back(c);
      }
      if (compact != kHeader) {
        return Status::parse_error(where + ": header '" + std::string(line) + "' is wrong; expected '" +
                                   std::string(kHeader) + "'");
      }
      have_header_ = true;
      return Status::ok();
    }
    if (++rows_ > limits::kMaxTracePoints) {
      return Status::parse_error(where + ": more than " + std::to_string(limits::kMaxTracePoints) +
                                 " rows; expected at most that many trace points");
    }
    return add_row(split_fields(line), line_no, where);
  }

  // The trace, once every record is read; `lines` is the text's line count.
  Result<AvailabilityTrace> finish(std::size_t lines) {
    if (!have_header_) {
      return Status::parse_error(src_ + ":" + std::to_string(lines) + ": no header; expected '" + std::string(kHeader) +
                                 "' as the first line that is not a comment");
    }
    if (workers_.empty()) {
      return Status::parse_error(src_ + ":" + std::to_string(lines) + ": no rows; expected at least one change");
    }
    if (duration_.value && *duration_.value < last_change_) {
      return Status::parse_error(src_ + ":" + std::to_string(duration_.line) +
                                 ": duration_s=" + shortest_number(*duration_.value) +
                                 " is before the last change at " + shortest_number(last_change_) + " (line " +
                                 std::to_string(last_change_line_) + "); expected a time >= every change");
    }
    if (loop_.value && *loop_.value <= last_change_) {
      return Status::parse_error(src_ + ":" + std::to_string(loop_.line) +
                                 ": loop_after_s=" + shortest_number(*loop_.value) +
                                 " is not after the last change at " + shortest_number(last_change_) + " (line " +
                                 std::to_string(last_change_line_) + "); expected a time after every change");
    }
    auto trace = AvailabilityTrace::create(std::move(workers_), duration_.value, loop_.value);
    if (!trace.is_ok()) return trace.status().with_context(src_);
    return trace;
  }

 private:
  Status add_row(const std::vector<std::string>& f, std::size_t line_no, const std::string& where) {
    if (f.size() != 3) {
      return Status::parse_error(where + ": row has " + std::to_string(f.size()) +
                                 " fields; expected 3 (time_s,worker,fraction)");
    }
    const auto t = parse_double(f[0]);
    if (!t || *t < 0.0) {
      return Status::parse_error(where + ": time '" + f[0] + "' is not valid; expected a number of seconds >= 0");
    }
    if (f[1].empty() || f[1].front() == '#') {
      return Status::parse_error(where + ": worker name '" + f[1] + "' is not valid; expected a non-empty name");
    }
    const auto frac = parse_double(f[2]);
    if (!frac || *frac < 0.0 || *frac > 1.0) {
      return Status::parse_error(where + ": fraction '" + f[2] + "' is not valid; expected a number in [0,1]");
    }
    auto it = index_.find(f[1]);
    if (it == index_.end()) {
      if (workers_.size() == limits::kMaxWorkers) {
        return Status::parse_error(where + ": more than " + std::to_string(limits::kMaxWorkers) +
                                   " workers; expected at most that many");
      }
      it = index_.emplace(f[1], workers_.size()).first;
      workers_.push_back({f[1], {}});
      last_line_.push_back(0);
    }
    WorkerSeries& w = workers_[it->second];
    if (!w.points.empty() && *t <= w.points.back().time_s) {
      return Status::parse_error(where + ": time " + f[0] + " for worker '" + f[1] +
                                 "' is not after its previous change at " + shortest_number(w.points.back().time_s) +
                                 " (line " + std::to_string(last_line_[it->second]) +
                                 "); expected strictly increasing times per worker");
    }
    w.points.push_back({*t, *frac});
    last_line_[it->second] = line_no;
    if (*t >= last_change_) {
      last_change_ = *t;
      last_change_line_ = line_no;
    }
    return Status::ok();
  }

  std::string src_;
  std::vector<WorkerSeries> workers_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::vector<std::size_t> last_line_;  // per worker: line of its previous row
  Directive loop_;
  Directive duration_;
  bool have_header_ = false;
  Seconds last_change_ = 0.0;
  std::size_t last_change_line_ = 0;
  std::size_t rows_ = 0;
};

}  // namespace

// Records as traces/FORMAT.md says (RFC 4180: a quoted worker name may hold a newline; a comment ends at the first).
Result<AvailabilityTrace> parse_trace(std::string_view text, std::string_view source) {
  TraceBuilder trace{std::string(source)};
  detail::TableLines lines(text, source, /*comments=*/true);
  std::string_view line;
  while (lines.next(line)) OMNI_RETURN_IF_ERROR(trace.add(line, lines.line_number()));
  OMNI_RETURN_IF_ERROR(lines.status());
  return trace.finish(lines.line_number());
}

Result<AvailabilityTrace> read_trace_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_trace(*text, path);
}

std::string format_trace(const AvailabilityTrace& trace, std::string_view comment) {
  std::string out = comment_lines(comment);
  out += "# duration_s=" + shortest_number(trace.duration()) + "\n";
  if (trace.loop_after_s()) out += "# loop_after_s=" + shortest_number(*trace.loop_after_s()) + "\n";
  out += kHeader;
  out += '\n';
  struct Row {
    Seconds t;
    std::size_t worker;
    double fraction;
  };
  std::vector<Row> rows;
  for (std::size_t w = 0; w < trace.worker_count(); ++w) {
    for (const TracePoint& p : trace.workers()[w].points) rows.push_back({p.time_s, w, p.fraction});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.t < b.t || (a.t == b.t && a.worker < b.worker); });
  for (const Row& r : rows) {
    out += shortest_number(r.t);
    out += ',';
    out += quote_field(trace.workers()[r.worker].name);
    out += ',';
    out += shortest_number(r.fraction);
    out += '\n';
  }
  return out;
}

Status write_trace_file(const AvailabilityTrace& trace, const std::string& path, std::string_view comment) {
  return write_text_atomically(path, format_trace(trace, comment));
}

}  // namespace omnilearn::traces
