// Importers for background-load and speed-noise sources: availability = 1 - utilisation, or a speed factor.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>

#include "importers.h"
#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::traces::detail {
namespace {

// The median of the positive gaps between consecutive sorted times, or `fallback` if there are none.
Seconds typical_step(const std::vector<Seconds>& times, Seconds fallback) {
  std::vector<Seconds> gaps;
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (times[i] > times[i - 1]) gaps.push_back(times[i] - times[i - 1]);
  }
  if (gaps.empty()) return fallback;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

double mean_load(const std::vector<TracePoint>& pts) {
  double sum = 0.0;
  for (const TracePoint& p : pts) sum += 1.0 - p.fraction;
  return pts.empty() ? 0.0 : sum / static_cast<double>(pts.size());
}

// Reads the header line (skipping nothing) or fails with path:1.
Result<std::vector<std::string>> read_header(LineReader& in, char delimiter, std::string_view expected) {
  std::string line;
  OMNI_RETURN_IF_ERROR(in.first_record(line, "a header " + std::string(expected)));
  return split_fields(line, delimiter);
}

// Reads the header line and finds each of `names` in it, or fails with path:1 naming the first missing column
// and `what` the file should have been.
Result<Columns> read_columns(LineReader& in, std::initializer_list<std::string_view> names, std::string_view what) {
  const auto header = read_header(in, ',', what);
  if (!header.is_ok()) return header.status();
  Columns columns{{}, header->size()};
  for (std::string_view name : names) {
    const auto col = find_column(*header, name);
    if (!col) return in.error("header has no '" + std::string(name) + "' column; expected " + std::string(what));
    columns.index.push_back(*col);
  }
  return columns;
}

// Points (t - base, value) sorted by time from raw (t, value) samples.
std::vector<TracePoint> rebase(std::vector<std::pair<Seconds, double>> samples, Seconds base) {
  std::stable_sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TracePoint> pts;
  for (const auto& [t, v] : samples) {
    if (!pts.empty() && t - base <= pts.back().time_s) {
      pts.back().fraction = v;  // a repeated timestamp: the later row wins
      continue;
    }
    pts.push_back({t - base, v});
  }
  return pts;
}

}  // namespace

Result<AvailabilityTrace> import_azure_v1(const ImportOptions& options) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto header = read_header(*in, ',', "'time_s,vm_<id>,...'");
  if (!header.is_ok()) return header.status();
  if (header->size() < 2 || (*header)[0] != "time_s") {
    return in->error("header starts with '" + header->front().substr(0, 40) +
                     "'; expected 'time_s,vm_<id>,...' (the Azure V1 wide CSV)");
  }
  std::vector<RawSeries> nodes(header->size() - 1);
  for (std::size_t c = 1; c < header->size(); ++c) nodes[c - 1].name = (*header)[c];
  std::vector<Seconds> times;
  std::string line;
  while (in->next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != header->size()) {
      return in->error("row has " + std::to_string(f.size()) + " fields; expected " + std::to_string(header->size()) +
                       " like the header");
    }
    const auto t = parse_double(f[0]);
    if (!t || (!times.empty() && *t <= times.back())) {
      return in->error("time_s '" + f[0] + "' is not valid; expected a number after the previous row's time");
    }
    times.push_back(*t);
    for (std::size_t c = 1; c < f.size(); ++c) {
      const auto v = parse_double(f[c]);
      if (!v) {
        return in->error("column " + (*header)[c] + " value '" + f[c] + "' is not a number; expected CPU %");
      }
      nodes[c - 1].points.push_back({*t, availability_from_percent(*v)});
    }
  }
  OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
  if (times.empty()) return in->error("no data rows; expected rows of time_s and CPU % per VM");
  const Seconds base = times.front();
  for (RawSeries& s : nodes) {
    for (TracePoint& p : s.points) p.time_s -= base;
    s.score = mean_load(s.points);
  }
  return select_and_build(std::move(nodes), options, times.back() - base + typical_step(times, 300.0));
}

Result<AvailabilityTrace> import_bitbrains(const ImportOptions& options) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (std::filesystem::is_directory(options.input, ec)) {
    // increment(ec), not ++: the range-for form throws when the folder cannot be read further.
    std::filesystem::directory_iterator it(options.input, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".csv") files.push_back(it->path());
    }
    if (ec) return Status::io_error(options.input + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
      const std::string sa = a.stem().string();
      const std::string sb = b.stem().string();
      return sa.size() != sb.size() ? sa.size() < sb.size() : sa < sb;  // numeric order for numeric names
    });
    if (files.empty()) return Status::not_found(options.input + ": no *.csv files in this folder");
  } else {
    files.emplace_back(options.input);
  }
  std::vector<RawSeries> nodes;
  std::vector<std::vector<std::pair<Seconds, double>>> samples;
  Seconds base = INFINITY;
  Seconds end = -INFINITY;
  std::vector<Seconds> first_file_times;
  for (const auto& path : files) {
    auto in = LineReader::open(path.string());
    if (!in.is_ok()) return in.status();
    const auto header = read_header(*in, ';', "'Timestamp [ms]; CPU cores; ...'");
    if (!header.is_ok()) return header.status();
    if (header->size() < 5 || header->front().rfind("Timestamp", 0) != 0 || (*header)[4] != "CPU usage [%]") {
      return in->error("header starts with '" + header->front().substr(0, 40) +
                       "'; expected 'Timestamp [ms];\\tCPU cores;...;CPU usage [%];...' (a Bitbrains VM file)");
    }
    std::vector<std::pair<Seconds, double>> rows;
    std::string line;
    while (in->next(line)) {
      if (trim(line).empty()) continue;
      const std::vector<std::string> f = split_fields(line, ';');
      if (f.size() < 5) {
        return in->error("row has " + std::to_string(f.size()) + " fields; expected at least 5, ';'-separated");
      }
      const auto t = parse_double(f[0]);
      const auto pct = parse_double(f[4]);
      if (!t || !pct) {
        return in->error("timestamp '" + f[0] + "' or CPU usage [%] '" + f[4] +
                         "' is not a number; expected Unix seconds and a percentage");
      }
      rows.emplace_back(*t, availability_from_percent(*pct));  // clamps CPU % above 100
      base = std::min(base, *t);
      end = std::max(end, *t);
      if (nodes.empty()) first_file_times.push_back(*t);
    }
    OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
    if (rows.empty()) return in->error("no data rows; expected one row per 300 s sample");
    nodes.push_back({"vm_" + path.stem().string(), {}, 0.0});
    samples.push_back(std::move(rows));
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].points = rebase(std::move(samples[i]), base);
    if (nodes[i].points.front().time_s > 0.0) nodes[i].points.insert(nodes[i].points.begin(), {0.0, 1.0});
    nodes[i].score = mean_load(nodes[i].points);
  }
  std::sort(first_file_times.begin(), first_file_times.end());
  return select_and_build(std::move(nodes), options, end - base + typical_step(first_file_times, 300.0));
}

Result<AvailabilityTrace> import_alibaba_2018(const ImportOptions& options) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto columns = read_columns(*in, {"cpu_util_percent"}, "'cpu_util_percent,...' (Alibaba 2018 cluster average)");
  if (!columns.is_ok()) return columns.status();
  const std::size_t cpu = columns->index[0];
  std::vector<TracePoint> points;
  std::string line;
  constexpr Seconds kRow = 300.0;  // row i covers [300 i, 300 (i + 1)) (SOURCE.md: no time column)
  while (in->next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    const auto v = f.size() == columns->width ? parse_double(f[cpu]) : std::nullopt;
    if (!v) {
      return in->error("row '" + line.substr(0, 40) + "' has no numeric cpu_util_percent; expected " +
                       std::to_string(columns->width) + " numeric fields");
    }
    points.push_back({static_cast<double>(points.size()) * kRow, availability_from_percent(*v)});
  }
  OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
  if (points.empty()) return in->error("no data rows; expected one row per 300 s");
  const std::size_t n = options.max_workers == 0 ? 16 : options.max_workers;
  std::vector<WorkerSeries> workers;
  for (std::size_t k = 0; k < n; ++k) workers.push_back({std::string("node").append(std::to_string(k)), points});
  return AvailabilityTrace::create(std::move(workers), static_cast<double>(points.size()) * kRow);
}

Result<AvailabilityTrace> import_alibaba_genai(const ImportOptions& options) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto columns = read_columns(*in, {"value", "timestamp_anon", "container_ip"},
                                    "'value,timestamp_anon,container_ip' (Alibaba GenAI pod GPU duty cycle)");
  if (!columns.is_ok()) return columns.status();
  const std::size_t value = columns->index[0], ts = columns->index[1], pod = columns->index[2];
  std::map<std::string, std::vector<std::pair<Seconds, double>>> by_pod;
  std::vector<Seconds> all_times;
  OMNI_RETURN_IF_ERROR(
      for_each_record(*in, columns->width, [&](const std::vector<std::string>& f, const std::string& line) {
        const auto v = parse_double(f[value]);
        const auto t = parse_double(f[ts]);
        if (!v || !t || f[pod].empty()) {
          return in->error("row '" + line.substr(0, 60) +
                           "' is not valid; expected a GPU %, a timestamp and a pod hash");
        }
        by_pod[f[pod]].emplace_back(*t, availability_from_percent(*v));
        all_times.push_back(*t);
        return Status::ok();
      }));
  if (by_pod.empty()) return in->error("no data rows; expected one row per pod and sample");
  std::sort(all_times.begin(), all_times.end());
  all_times.erase(std::unique(all_times.begin(), all_times.end()), all_times.end());
  const Seconds base = all_times.front();
  std::vector<RawSeries> nodes;
  for (auto& [hash, samples] : by_pod) {
    RawSeries s{"pod_" + hash.substr(0, 8), rebase(std::move(samples), base), 0.0};
    if (s.points.front().time_s > 0.0) s.points.insert(s.points.begin(), {0.0, 1.0});
    s.score = mean_load(s.points);
    nodes.push_back(std::move(s));
  }
  return select_and_build(std::move(nodes), options, all_times.back() - base + typical_step(all_times, 57.0));
}

Result<AvailabilityTrace> import_azure_noise_2024(const ImportOptions& options) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto columns =
      read_columns(*in, {"value", "starttime", "VM_id"}, "'value,runtime,starttime,VM_id' (Azure VM noise 2024)");
  if (!columns.is_ok()) return columns.status();
  const std::size_t value = columns->index[0], start = columns->index[1], vm = columns->index[2];
  std::map<long, std::vector<std::pair<Seconds, double>>> by_vm;
  OMNI_RETURN_IF_ERROR(for_each_record(*in, columns->width, [&](const std::vector<std::string>& f, const std::string&) {
    const auto v = parse_double(f[value]);
    const auto t = parse_iso_datetime(f[start]);
    const auto id = parse_double(f[vm]);
    if (!v || *v <= 0.0) return in->error("value '" + f[value] + "' is not valid; expected a benchmark score > 0");
    if (!t) return in->error("starttime '" + f[start] + "' is not valid; expected YYYY-MM-DD HH:MM:SS.mmm");
    if (!id || *id != std::floor(*id)) return in->error("VM_id '" + f[vm] + "' is not valid; expected an integer");
    by_vm[std::lround(*id)].emplace_back(*t, *v);
    return Status::ok();
  }));
  if (by_vm.empty()) return in->error("no data rows; expected one row per benchmark run");
  Seconds base = INFINITY;
  Seconds end = -INFINITY;
  std::vector<Seconds> gaps_source;
  for (auto& [id, samples] : by_vm) {
    std::vector<double> values;
    for (const auto& s : samples) {
      values.push_back(s.second);
      base = std::min(base, s.first);
      end = std::max(end, s.first);
    }
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    for (auto& s : samples) s.second = std::round(std::min(1.0, s.second / median) * 1e5) / 1e5;
  }
  std::vector<RawSeries> nodes;
  for (auto& [id, samples] : by_vm) {
    RawSeries s{std::string("vm_").append(std::to_string(id)), rebase(std::move(samples), base), 0.0};
    if (gaps_source.empty()) {
      for (const TracePoint& p : s.points) gaps_source.push_back(p.time_s);
    }
    if (s.points.front().time_s > 0.0) s.points.insert(s.points.begin(), {0.0, 1.0});
    s.score = mean_load(s.points);
    nodes.push_back(std::move(s));
  }
  return select_and_build(std::move(nodes), options, end - base + typical_step(gaps_source, 3600.0));
}

}  // namespace omnilearn::traces::detail
