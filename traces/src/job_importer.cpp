#include "omnilearn/traces/job_importer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "portable_random.h"

namespace omnilearn::traces {
namespace {

// Samples per epoch: the sizes of the datasets named in the Pollux paper (CIFAR-10 50,000; ImageNet-1k 1,281,167;
// SQuAD v1.1 88,641 features; PASCAL VOC 07+12 16,551); DeepSpeech2's and NCF's are read off the artifact's
// validation-<smallest batch>.csv (iterations in the first epoch x batch: 7,140 and 4,971,008).
const std::vector<PolluxApplication> kApplications{
    {"cifar10", "resnet18", "cifar10", 50000, 100, 128},
    {"imagenet", "resnet50", "imagenet", 1281167, 90, 200},
    {"bert", "bert", "squad", 88641, 2, 12},
    {"deepspeech2", "deepspeech2", "cmu-arctic", 7140, 80, 20},
    {"yolov3", "yolov3", "voc", 16551, 50, 8},
    {"ncf", "ncf", "movielens", 4971008, 10, 256},
};

constexpr std::array<std::pair<JobImportFormat, std::string_view>, 2> kFormatNames{{
    {JobImportFormat::kPollux, "pollux"},
    {JobImportFormat::kPhilly, "philly"},
}};

using detail::uniform01;

// Workers, GPUs or a batch in a raw row: far beyond any cluster, and small enough that products stay exact.
constexpr double kMaxCount = 1e9;

// The header's columns by name, or an error naming the missing one.
Result<std::vector<std::size_t>> columns(const LineReader& in, const std::string& line,
                                         std::initializer_list<std::string_view> names, std::string_view what) {
  const std::vector<std::string> header = split_fields(line);
  std::vector<std::size_t> out;
  for (std::string_view n : names) {
    const auto c = find_column(header, n);
    if (!c) {
      return in.error("header '" + line.substr(0, 100) + "' lacks column '" + std::string(n) + "'; expected " +
                      std::string(what));
    }
    out.push_back(*c);
  }
  return out;
}

Result<std::vector<JobSpec>> import_pollux(const JobImportOptions& o) {
  auto in = LineReader::open(o.input);
  if (!in.is_ok()) return in.status();
  constexpr std::string_view kWhat = "'name,time,application,num_replicas,batch_size' (a Pollux workload)";
  std::string line;
  OMNI_RETURN_IF_ERROR(in->first_record(line, "a header " + std::string(kWhat)));
  auto col = columns(*in, line, {"name", "time", "application", "num_replicas", "batch_size"}, kWhat);
  if (!col.is_ok()) return col.status();
  const std::vector<std::size_t>& c = *col;
  const std::size_t width = split_fields(line).size();
  std::vector<std::pair<std::size_t, JobSpec>> jobs;  // (line, job)
  while (in->next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != width) {
      return in->error("row has " + std::to_string(f.size()) + " fields; expected " + std::to_string(width));
    }
    JobSpec j;
    j.name = f[c[0]];
    const auto t = parse_double(f[c[1]]);
    if (!t || *t < 0.0) return in->error("time '" + f[c[1]] + "' is not valid; expected seconds >= 0");
    const PolluxApplication* app = find_pollux_application(f[c[2]]);
    if (app == nullptr) {
      std::string known;
      for (const auto& a : kApplications) known += (known.empty() ? "" : ", ") + std::string(a.name);
      return in->error("application '" + f[c[2]] + "' is not known; expected one of: " + known);
    }
    // Bounded before the casts below (a double beyond int64 is undefined to convert).
    const auto r = parse_double(f[c[3]]);
    if (!r || *r < 1.0 || *r != std::floor(*r) || *r > kMaxCount) {
      return in->error("num_replicas '" + f[c[3]] + "' is not valid; expected a whole number in [1, 1e9]");
    }
    const auto b = parse_double(f[c[4]]);
    if (!b || *b < *r || *b != std::floor(*b) || *b > kMaxCount) {
      return in->error("batch_size '" + f[c[4]] + "' is not valid; expected a whole number in [num_replicas, 1e9]");
    }
    j.arrival_s = *t;
    j.model = app->model;
    j.dataset = app->dataset;
    j.dataset_samples = app->dataset_samples;
    j.epochs = app->epochs;
    j.workers = j.min_workers = j.max_workers = static_cast<std::int64_t>(*r);
    j.global_batch = static_cast<std::int64_t>(*b);
    j.mode = o.mode;
    j.batch_policy = o.batch_policy;
    if (jobs.size() == kMaxJobs) return in->error("more than " + std::to_string(kMaxJobs) + " jobs");
    const Status st = validate_job(j);
    if (!st.is_ok()) return in->error(st.message());
    jobs.emplace_back(in->line_number(), std::move(j));
  }
  OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
  if (jobs.empty()) return in->error("no jobs; expected one row per job");
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const auto& a, const auto& b) { return a.second.arrival_s < b.second.arrival_s; });
  std::vector<JobSpec> out;
  std::set<std::string, std::less<>> names;
  for (auto& [line_no, job] : jobs) {
    if (!names.insert(job.name).second) {
      return Status::parse_error(o.input + ":" + std::to_string(line_no) + ": name '" + job.name +
                                 "' is used by an earlier row; expected unique names");
    }
    out.push_back(std::move(job));
  }
  return out;
}

struct PhillyRecord {
  Seconds submit_s;
  std::int64_t gpus;
  Seconds duration_s;
  std::size_t line;
};

// The records of a Philly-shaped file that pass the cluster and duration filters, in file order.
Result<std::vector<PhillyRecord>> read_philly(const JobImportOptions& o) {
  auto in = LineReader::open(o.input);
  if (!in.is_ok()) return in.status();
  constexpr std::string_view kWhat = "'timestamp,duration,num_gpus,gpu_time,cluster' (a Philly-shaped job trace)";
  std::string line;
  OMNI_RETURN_IF_ERROR(in->first_record(line, "a header " + std::string(kWhat)));
  auto col = columns(*in, line, {"timestamp", "duration", "num_gpus", "cluster"}, kWhat);
  if (!col.is_ok()) return col.status();
  const std::vector<std::size_t>& c = *col;
  const std::size_t width = split_fields(line).size();
  std::vector<PhillyRecord> records;
  while (in->next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != width) {
      return in->error("row has " + std::to_string(f.size()) + " fields; expected " + std::to_string(width));
    }
    const auto t = parse_iso_datetime(f[c[0]]);
    if (!t) return in->error("timestamp '" + f[c[0]] + "' is not valid; expected YYYY-MM-DD HH:MM:SS");
    const auto d = parse_double(f[c[1]]);
    if (!d || *d <= 0.0) return in->error("duration '" + f[c[1]] + "' is not valid; expected seconds > 0");
    const auto g = parse_double(f[c[2]]);
    if (!g || *g < 1.0 || *g != std::floor(*g) || *g > kMaxCount) {
      return in->error("num_gpus '" + f[c[2]] + "' is not valid; expected a whole number >= 1");
    }
    if (!o.cluster.empty() && f[c[3]] != o.cluster) continue;
    if (*d < o.min_duration_s) continue;
    if (records.size() == kMaxJobs) {
      return in->error("more than " + std::to_string(kMaxJobs) +
                       " jobs pass the filters; expected at most that many (use cluster or min_duration_s)");
    }
    records.push_back({*t, static_cast<std::int64_t>(*g), *d, in->line_number()});
  }
  OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
  if (records.empty()) return in->error("no jobs left after the filters; expected at least one");
  return records;
}

Result<std::vector<JobSpec>> import_philly(const JobImportOptions& o) {
  if (o.philly.speeds == nullptr) return Status::invalid_argument("philly import: no device speed table given");
  if (!(o.clip_from_s >= 0.0) || std::isinf(o.clip_from_s) || !(o.clip_to_s > o.clip_from_s)) {
    return Status::invalid_argument("philly import: clip window [" + shortest_number(o.clip_from_s) + ", " +
                                    shortest_number(o.clip_to_s) + ") s is not valid; expected 0 <= T0 < T1");
  }
  auto read = read_philly(o);
  if (!read.is_ok()) return read.status();
  std::vector<PhillyRecord>& records = *read;
  std::stable_sort(records.begin(), records.end(),
                   [](const PhillyRecord& a, const PhillyRecord& b) { return a.submit_s < b.submit_s; });
  const Seconds base = records.front().submit_s + o.clip_from_s;
  std::mt19937_64 rng(o.seed);
  PhillyConversion conv = o.philly;
  conv.batch_policy = o.batch_policy;
  conv.mode = o.mode;
  std::vector<JobSpec> out;
  for (const PhillyRecord& r : records) {
    const Seconds arrival = r.submit_s - base;
    if (arrival < 0.0) continue;
    if (r.submit_s - records.front().submit_s >= o.clip_to_s) break;
    if (o.max_jobs != 0 && out.size() == o.max_jobs) break;
    if (out.size() == kMaxJobs) {
      return Status::invalid_argument(o.input + ": more than " + std::to_string(kMaxJobs) +
                                      " jobs; expected at most that many (use max_jobs or a clip window)");
    }
    auto job = philly_job("", arrival, r.gpus, r.duration_s, uniform01(rng), conv);
    if (!job.is_ok()) return job.status().with_context(o.input + ":" + std::to_string(r.line));
    job->name = job->model + "-" + std::to_string(out.size());
    out.push_back(std::move(job).value());
  }
  if (out.empty()) return Status::invalid_argument(o.input + ": no jobs in the clip window; expected at least one");
  return out;
}

}  // namespace

const std::vector<PolluxApplication>& pollux_applications() { return kApplications; }

const PolluxApplication* find_pollux_application(std::string_view name) {
  for (const PolluxApplication& a : kApplications) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string_view job_import_format_name(JobImportFormat format) {
  for (const auto& [f, name] : kFormatNames) {
    if (f == format) return name;
  }
  return "unknown";
}

std::optional<JobImportFormat> parse_job_import_format(std::string_view name) {
  for (const auto& [f, n] : kFormatNames) {
    if (n == name) return f;
  }
  return std::nullopt;
}

Result<JobSpec> philly_job(std::string name, Seconds arrival_s, std::int64_t gpus, Seconds duration_s, double coin,
                           const PhillyConversion& conversion) {
  if (conversion.speeds == nullptr) return Status::invalid_argument("philly job: no device speed table given");
  if (gpus < 1 || !(duration_s > 0.0)) {
    return Status::invalid_argument("philly job: expected gpus >= 1 and duration_s > 0");
  }
  const double gpu_hours = static_cast<double>(gpus) * duration_s / 3600.0;
  std::string_view app_name = "imagenet";
  if (gpu_hours < 1.0) {
    app_name = coin < 0.5 ? "cifar10" : "ncf";
  } else if (gpu_hours < 10.0) {
    app_name = coin < 0.5 ? "deepspeech2" : "bert";
  } else if (gpu_hours < 100.0) {
    app_name = "yolov3";
  }
  const PolluxApplication& app = *find_pollux_application(app_name);
  const auto speed = conversion.speeds->speed(app.model, conversion.reference_device, app.batch_per_worker);
  if (!speed.is_ok()) return speed.status().with_context("philly job");
  JobSpec j;
  j.name = std::move(name);
  j.arrival_s = arrival_s;
  j.model = app.model;
  j.dataset = app.dataset;
  j.dataset_samples = app.dataset_samples;
  j.epochs = duration_s * speed->samples_per_s * static_cast<double>(gpus) / static_cast<double>(app.dataset_samples);
  j.workers = j.min_workers = j.max_workers = gpus;
  j.global_batch = app.batch_per_worker * gpus;
  j.mode = conversion.mode;
  j.batch_policy = conversion.batch_policy;
  // An extreme record (a huge duration, a non-finite arrival) must not make a job the job file cannot hold.
  JobSpec named = j;  // callers may name the job afterwards (by its model and index)
  if (named.name.empty()) named.name = named.model;
  const Status valid = validate_job(named);
  if (!valid.is_ok()) return valid.with_context("philly job");
  return j;
}

Result<std::vector<JobSize>> read_philly_sizes(const JobImportOptions& options) {
  auto records = read_philly(options);
  if (!records.is_ok()) return records.status();
  std::vector<JobSize> out;
  for (const PhillyRecord& r : *records) out.push_back({r.gpus, r.duration_s});
  return out;
}

Result<std::vector<JobSpec>> import_jobs(const JobImportOptions& options) {
  if (options.input.empty()) return Status::invalid_argument("jobs import: no input path given");
  switch (options.format) {
    case JobImportFormat::kPollux:
      return import_pollux(options);
    case JobImportFormat::kPhilly:
      return import_philly(options);
  }
  return Status::invalid_argument("jobs import: unknown format");
}

}  // namespace omnilearn::traces
