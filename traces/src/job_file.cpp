#include "omnilearn/traces/job_file.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

constexpr std::size_t kColumns = 13;
constexpr double kMaxArrivalS = 1e9;  // about 31 years
constexpr double kMaxEpochs = 1e6;

// A name a CLI or a file path can carry: non-empty, no whitespace at either end, no '#' first.
bool plain_name(std::string_view s) {
  return !s.empty() && s.front() != '#' && trim(s) == s && s.find_first_of("\r\n") == std::string_view::npos;
}

// A token such as a policy name: letters, digits, '-', '_', '.'.
bool token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

// The whole field as an integer in [lo, hi] (exponent notation allowed when the value is whole), or nothing.
std::optional<std::int64_t> parse_int(std::string_view field, std::int64_t lo, std::int64_t hi) {
  const auto v = parse_double(field);
  if (!v || *v != std::floor(*v) || *v < static_cast<double>(lo) || *v > static_cast<double>(hi)) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

// The stated range of every number (traces/JOBS.md): beyond any real workload, and small enough that a run stays
// finite in time and memory (limits::kMaxIterations steps at most).
constexpr std::int64_t kMaxSamples = 1'000'000'000'000;  // beyond any dataset, below 2^53
constexpr std::int64_t kMaxWorkers = static_cast<std::int64_t>(limits::kMaxWorkers);
constexpr std::int64_t kMaxBatch = 1'000'000'000;

using detail::bad;  // "where: field 'value' is not valid; expected ..."

// name, arrival_s, model, dataset, dataset_samples, epochs, target.
Status parse_what(const std::vector<std::string>& f, const std::string& where, JobSpec& job) {
  job.name = f[0];
  if (!plain_name(job.name)) return bad(where, "name", f[0], "a non-empty job name on one line");
  const auto arrival = parse_double(f[1]);
  if (!arrival || *arrival < 0.0 || *arrival > kMaxArrivalS) {
    return bad(where, "arrival_s", f[1], "a number of seconds in [0, 1e9] (about 31 years)");
  }
  job.arrival_s = *arrival;
  job.model = f[2];
  if (!plain_name(job.model)) return bad(where, "model", f[2], "a catalogue model name or a model profile file");
  job.dataset = f[3];
  if (!job.dataset.empty() && !plain_name(job.dataset)) return bad(where, "dataset", f[3], "a dataset name or nothing");
  const auto samples = parse_int(f[4], 1, kMaxSamples);
  if (!samples) return bad(where, "dataset_samples", f[4], "a whole number of samples per epoch in [1, 1e12]");
  job.dataset_samples = *samples;
  job.epochs = 0.0;
  if (!f[5].empty()) {
    const auto e = parse_double(f[5]);
    if (!e || *e <= 0.0 || *e > kMaxEpochs) {
      return bad(where, "epochs", f[5], "a number of epochs in (0, 1e6], or nothing (train to the target)");
    }
    job.epochs = *e;
  }
  job.target = 0.0;
  if (!f[6].empty()) {
    const auto t = parse_double(f[6]);
    if (!t || *t <= 0.0 || *t > 1.0) return bad(where, "target", f[6], "a test accuracy in (0,1], or nothing");
    job.target = *t;
  }
  if (job.epochs == 0.0 && job.target == 0.0) {
    return Status::parse_error(where + ": epochs and target are both empty; expected epochs, a target or both");
  }
  return Status::ok();
}

// workers, min_workers, max_workers, global_batch, and the steps they make.
Status parse_size(const std::vector<std::string>& f, const std::string& where, JobSpec& job) {
  const auto workers = parse_int(f[7], 1, kMaxWorkers);
  if (!workers) return bad(where, "workers", f[7], "a whole number of workers in [1, 1000000]");
  job.workers = *workers;
  job.min_workers = job.workers;
  job.max_workers = job.workers;
  if (!f[8].empty()) {
    const auto lo = parse_int(f[8], 1, job.workers);
    if (!lo) return bad(where, "min_workers", f[8], "a whole number in [1, workers] or nothing (= workers)");
    job.min_workers = *lo;
  }
  if (!f[9].empty()) {
    const auto hi = parse_int(f[9], job.workers, kMaxWorkers);
    if (!hi) return bad(where, "max_workers", f[9], "a whole number in [workers, 1000000] or nothing (= workers)");
    job.max_workers = *hi;
  }
  const auto batch = parse_int(f[10], job.min_workers, kMaxBatch);
  if (!batch) return bad(where, "global_batch", f[10], "a whole number of samples per step in [min_workers, 1e9]");
  job.global_batch = *batch;
  const double steps = job.epochs * static_cast<double>(job.dataset_samples) / static_cast<double>(job.global_batch);
  if (steps > static_cast<double>(limits::kMaxIterations)) {
    return Status::parse_error(where + ": epochs " + f[5] + " x dataset_samples " + f[4] + " / global_batch " + f[10] +
                               " is " + shortest_number(std::ceil(steps)) + " steps; expected at most " +
                               std::to_string(limits::kMaxIterations));
  }
  return Status::ok();
}

// mode, batch_policy and the optional asp_rule.
Status parse_how(const std::vector<std::string>& f, const std::string& where, JobSpec& job) {
  const auto mode = parse_job_mode(f[11]);
  if (!mode) return bad(where, "mode", f[11], "bsp or asp");
  job.mode = *mode;
  job.batch_policy = f[12];
  if (!token(job.batch_policy)) return bad(where, "batch_policy", f[12], "a policy name (uniform, omnilearn, ...)");
  job.asp_rule = f.size() > kColumns ? f[kColumns] : std::string();
  if (job.asp_rule.empty()) return Status::ok();
  if (job.mode != JobMode::kAsp) return bad(where, "asp_rule", job.asp_rule, "nothing for a bsp job");
  const std::size_t colon = job.asp_rule.find(':');
  const std::string_view name = std::string_view(job.asp_rule).substr(0, colon);
  const bool named = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (!named || (colon != std::string::npos && !token(std::string_view(job.asp_rule).substr(colon + 1)))) {
    return bad(where, "asp_rule", job.asp_rule,
               "a rule, with its parameter after ':' (asgd, ssp:2, ringmaster:8, ...)");
  }
  return Status::ok();
}

// Reads one row's fields into `job`; `where` is "source:line".
Status parse_row(const std::vector<std::string>& f, const std::string& where, JobSpec& job) {
  OMNI_RETURN_IF_ERROR(parse_what(f, where, job));
  OMNI_RETURN_IF_ERROR(parse_size(f, where, job));
  return parse_how(f, where, job);
}

}  // namespace

std::string_view job_mode_name(JobMode mode) { return mode == JobMode::kAsp ? "asp" : "bsp"; }

std::optional<JobMode> parse_job_mode(std::string_view name) {
  if (name == "bsp") return JobMode::kBsp;
  if (name == "asp") return JobMode::kAsp;
  return std::nullopt;
}

Result<std::vector<JobSpec>> parse_job_file(std::string_view text, std::string_view source) {
  std::vector<JobSpec> jobs;
  std::set<std::string, std::less<>> names;
  bool have_header = false;
  std::size_t columns = kColumns;  // one more with the asp_rule column
  std::size_t last_line = 0;
  detail::TableLines lines(text, source);
  std::string_view line;
  while (lines.next(line)) {
    const std::string where = lines.where();
    if (!have_header) {
      std::string compact;
      for (char c : line) {
        if (c != ' ' && c != '\t') compact.push_back(c);
      }
      const std::string with_rule = std::string(kJobFileHeader) + "," + std::string(kJobFileAspRuleColumn);
      if (compact == with_rule) columns = kColumns + 1;
      if (compact != kJobFileHeader && compact != with_rule) {
        return Status::parse_error(where + ": header '" + std::string(line.substr(0, 200)) + "' is wrong; expected '" +
                                   std::string(kJobFileHeader) + "' (and optionally '," +
                                   std::string(kJobFileAspRuleColumn) + "')");
      }
      have_header = true;
      continue;
    }
    if (jobs.size() == kMaxJobs) {
      return Status::parse_error(where + ": more than " + std::to_string(kMaxJobs) +
                                 " jobs; expected at most that many");
    }
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != columns) {
      return Status::parse_error(where + ": row has " + std::to_string(f.size()) + " fields; expected " +
                                 std::to_string(columns) + " (" + std::string(kJobFileHeader) +
                                 (columns > kColumns ? "," + std::string(kJobFileAspRuleColumn) : std::string()) + ")");
    }
    JobSpec job;
    OMNI_RETURN_IF_ERROR(parse_row(f, where, job));
    if (!jobs.empty() && job.arrival_s < jobs.back().arrival_s) {
      return Status::parse_error(where + ": arrival_s " + f[1] + " is before the previous job's " +
                                 shortest_number(jobs.back().arrival_s) + " (line " + std::to_string(last_line) +
                                 "); expected rows in arrival order");
    }
    if (!names.insert(job.name).second) {
      return Status::parse_error(where + ": name '" + job.name + "' is used by an earlier job; expected unique names");
    }
    last_line = lines.line_number();
    jobs.push_back(std::move(job));
  }
  OMNI_RETURN_IF_ERROR(lines.status());
  if (!have_header) {
    return Status::parse_error(lines.where() + ": no header; expected '" + std::string(kJobFileHeader) +
                               "' as the first line that is not a comment");
  }
  if (jobs.empty()) return Status::parse_error(lines.where() + ": no jobs; expected at least one");
  return jobs;
}

Result<std::vector<JobSpec>> read_job_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_job_file(*text, path);
}

std::string format_job_file(const std::vector<JobSpec>& jobs, std::string_view comment) {
  std::string out = comment_lines(comment);
  const bool rules = std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return !j.asp_rule.empty(); });
  out += kJobFileHeader;
  if (rules) out += "," + std::string(kJobFileAspRuleColumn);
  out += '\n';
  const auto count = [](std::int64_t v) { return std::to_string(v); };
  for (const JobSpec& j : jobs) {
    out += quote_field(j.name) + ',' + shortest_number(j.arrival_s) + ',' + quote_field(j.model) + ',' +
           quote_field(j.dataset) + ',' + count(j.dataset_samples) + ',' +
           (j.epochs > 0.0 ? shortest_number(j.epochs) : std::string()) + ',' +
           (j.target > 0.0 ? shortest_number(j.target) : std::string()) + ',' + count(j.workers) + ',' +
           (j.elastic() ? count(j.min_workers) : std::string()) + ',' +
           (j.elastic() ? count(j.max_workers) : std::string()) + ',' + count(j.global_batch) + ',' +
           std::string(job_mode_name(j.mode)) + ',' + j.batch_policy +
           (rules ? ',' + quote_field(j.asp_rule) : std::string()) + '\n';
  }
  return out;
}

Status validate_job(const JobSpec& job) {
  if (!(1 <= job.min_workers && job.min_workers <= job.workers && job.workers <= job.max_workers)) {
    return Status::invalid_argument("job '" + job.name + "': workers " + std::to_string(job.workers) + " in [" +
                                    std::to_string(job.min_workers) + ", " + std::to_string(job.max_workers) +
                                    "]; expected 1 <= min_workers <= workers <= max_workers");
  }
  // One rule set: the job goes through the row parser as its canonical text would.
  const std::string text = format_job_file({job});
  const std::size_t row = text.find('\n') + 1;
  const std::vector<std::string> f = split_fields(trim(std::string_view(text).substr(row)));
  JobSpec parsed;
  return parse_row(f, "job '" + job.name + "'", parsed);
}

Status write_job_file(const std::vector<JobSpec>& jobs, const std::string& path, std::string_view comment) {
  return write_text_atomically(path, format_job_file(jobs, comment));
}

}  // namespace omnilearn::traces
