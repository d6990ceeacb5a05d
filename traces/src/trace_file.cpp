#include "omnilearn/traces/trace_file.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"

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

}  // namespace

Result<AvailabilityTrace> parse_trace(std::string_view text, std::string_view source) {
  const std::string src(source);
  std::vector<WorkerSeries> workers;
  std::map<std::string, std::size_t, std::less<>> index;
  std::vector<std::size_t> last_line;  // per worker: line of its previous row
  Directive loop;
  Directive duration;
  bool have_header = false;
  std::size_t line_no = 0;
  Seconds last_change = 0.0;
  std::size_t last_change_line = 0;
  std::size_t pos = 0;
  std::size_t rows = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::size_t first_line = line_no + 1;
    const std::string where = src + ":" + std::to_string(first_line);
    // A row ends at a newline outside double quotes (a quoted worker name may hold one); a comment ends at the
    // first newline.
    const std::string_view first = trim(text.substr(pos, end - pos));
    if (!first.empty() && first.front() != '#' && first.find('"') != std::string_view::npos) {
      bool quoted = false;
      std::size_t i = pos;
      for (; i < text.size() && (quoted || text[i] != '\n'); ++i) {
        if (text[i] == '"') quoted = !quoted;
      }
      if (quoted) return Status::parse_error(where + ": a '\"' is not closed; expected a closing '\"' (RFC 4180)");
      end = i;
    }
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    line_no += 1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), '\n'));
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == '#') {
      bool matched = false;
      OMNI_RETURN_IF_ERROR(parse_directive(line.substr(1), "loop_after_s", line_no, where, loop, matched));
      if (!matched) {
        OMNI_RETURN_IF_ERROR(parse_directive(line.substr(1), "duration_s", line_no, where, duration, matched));
      }
      continue;
    }
    if (!have_header) {
      std::string compact;
      for (char c : line) {
        if (c != ' ' && c != '\t') compact.push_back(c);
      }
      if (compact != kHeader) {
        return Status::parse_error(where + ": header '" + std::string(line) + "' is wrong; expected '" +
                                   std::string(kHeader) + "'");
      }
      have_header = true;
      continue;
    }
    if (++rows > limits::kMaxTracePoints) {
      return Status::parse_error(where + ": more than " + std::to_string(limits::kMaxTracePoints) +
                                 " rows; expected at most that many trace points");
    }
    const std::vector<std::string> f = split_fields(line);
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
    auto it = index.find(f[1]);
    if (it == index.end()) {
      if (workers.size() == limits::kMaxWorkers) {
        return Status::parse_error(where + ": more than " + std::to_string(limits::kMaxWorkers) +
                                   " workers; expected at most that many");
      }
      it = index.emplace(f[1], workers.size()).first;
      workers.push_back({f[1], {}});
      last_line.push_back(0);
    }
    WorkerSeries& w = workers[it->second];
    if (!w.points.empty() && *t <= w.points.back().time_s) {
      return Status::parse_error(where + ": time " + f[0] + " for worker '" + f[1] +
                                 "' is not after its previous change at " + shortest_number(w.points.back().time_s) +
                                 " (line " + std::to_string(last_line[it->second]) +
                                 "); expected strictly increasing times per worker");
    }
    w.points.push_back({*t, *frac});
    last_line[it->second] = line_no;
    if (*t >= last_change) {
      last_change = *t;
      last_change_line = line_no;
    }
  }
  if (!have_header) {
    return Status::parse_error(src + ":" + std::to_string(line_no) + ": no header; expected '" +
                               std::string(kHeader) + "' as the first line that is not a comment");
  }
  if (workers.empty()) {
    return Status::parse_error(src + ":" + std::to_string(line_no) + ": no rows; expected at least one change");
  }
  if (duration.value && *duration.value < last_change) {
    return Status::parse_error(src + ":" + std::to_string(duration.line) + ": duration_s=" +
                               shortest_number(*duration.value) + " is before the last change at " + shortest_number(last_change) +
                               " (line " + std::to_string(last_change_line) + "); expected a time >= every change");
  }
  if (loop.value && *loop.value <= last_change) {
    return Status::parse_error(src + ":" + std::to_string(loop.line) + ": loop_after_s=" + shortest_number(*loop.value) +
                               " is not after the last change at " + shortest_number(last_change) + " (line " +
                               std::to_string(last_change_line) + "); expected a time after every change");
  }
  auto trace = AvailabilityTrace::create(std::move(workers), duration.value, loop.value);
  if (!trace.is_ok()) return trace.status().with_context(src);
  return trace;
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
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.t < b.t || (a.t == b.t && a.worker < b.worker);
  });
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
