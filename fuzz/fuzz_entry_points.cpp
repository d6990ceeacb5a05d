#include "fuzz_entry_points.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/check.h"
#include "omnilearn/scenarios/scenario_json.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "omnilearn/scenarios/sweep.h"
#include "omnilearn/traces/chakra_trace.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/gpu_power_table.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/job_importer.h"
#include "omnilearn/traces/metric_curves.h"
#include "omnilearn/traces/packed_speeds.h"
#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_importer.h"

namespace omnilearn::fuzz {
namespace {

constexpr const char* kBaseScenario =
    "name: base\n"
    "cluster: {nodes: [{name: a, cores: 4, speed: 4e9}, {name: b, cores: 2, speed: 2e9}]}\n"
    "workload: {model: resnet18, dataset: cifar10, global_batch: 64, epochs: 1}\n";

// A scratch folder of this process (inputs that name files resolve in it), made on first use and removed when the
// process exits normally (a crash keeps it beside the crashing input).
struct Scratch {
  std::filesystem::path dir;
  Scratch() : dir(std::filesystem::temp_directory_path() / ("omnilearn-fuzz-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "s.yaml") << kBaseScenario;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

const std::filesystem::path& scratch() {
  static const Scratch s;
  return s.dir;
}

std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

void check_round_trip(const traces::AvailabilityTrace& trace) {
  const std::string text = traces::format_trace(trace, "fuzz");
  auto back = traces::parse_trace(text, "round-trip.csv");
  OMNI_CHECK(back.is_ok(), "a written trace does not read back: " + back.status().message());
  OMNI_CHECK(traces::format_trace(*back, "fuzz") == text, "a written trace reads back different");
}

// An error from reading `source` must name it (the user is told which file to fix).
void check_names(const Status& status, const std::string& source) {
  OMNI_CHECK(status.is_ok() || status.message().find(source) != std::string::npos,
             "an error does not name its file " + source + ": " + status.message());
}

}  // namespace

void fuzz_scenario(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = as_text(data, size);
  std::vector<std::string> overrides;
  for (std::size_t pos = 0; text.substr(pos, 5) == "#set ";) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    overrides.emplace_back(text.substr(pos + 5, end - pos - 5));
    pos = end + 1;
    if (pos >= text.size()) break;
  }
  auto scenario = scenarios::parse_scenario(text, (scratch() / "x.yaml").string(), overrides);
  if (scenario) (void)scenarios::scenario_to_json(*scenario);
}

void fuzz_sweep(const std::uint8_t* data, std::size_t size) {
  auto sweep = scenarios::load_sweep(write_scratch("sweep.yaml", as_text(data, size)));
  if (!sweep) return;
  const std::vector<scenarios::SweepPoint> points = scenarios::expand(*sweep);
  if (!points.empty()) (void)scenarios::check_point(*sweep, points.front());
}

void fuzz_trace(const std::uint8_t* data, std::size_t size) {
  auto trace = traces::parse_trace(as_text(data, size), "fuzz.csv");
  if (trace) check_round_trip(*trace);
}

void fuzz_importer(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::vector<traces::ImportFormat> formats = traces::all_import_formats();
  traces::ImportOptions options;
  options.format = formats[data[0] % formats.size()];
  options.max_workers = 8;
  options.input = write_scratch("raw.csv", as_text(data + 1, size - 1));
  auto trace = traces::import_trace(options);
  if (trace) check_round_trip(*trace);
}

void fuzz_jobs(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::string_view text = as_text(data + 1, size - 1);
  const std::string source = "jobs-fuzz.csv";
  switch (data[0] % 7) {
    case 0: {
      auto jobs = traces::parse_job_file(text, source);
      check_names(jobs.status(), source);
      if (!jobs) return;
      const std::string written = traces::format_job_file(*jobs);
      auto back = traces::parse_job_file(written, "round-trip.csv");
      OMNI_CHECK(back.is_ok(), "a written job file does not read back: " + back.status().message());
      OMNI_CHECK(traces::format_job_file(*back) == written, "a written job file reads back different");
      return;
    }
    case 1: {
      traces::JobImportOptions options;
      options.input = write_scratch("jobs-raw.csv", text);
      auto jobs = traces::import_jobs(options);  // Pollux's workload files
      check_names(jobs.status(), options.input);
      if (jobs) (void)traces::format_job_file(*jobs);
      return;
    }
    case 2: {
      traces::JobImportOptions options;
      options.format = traces::JobImportFormat::kPhilly;
      options.input = write_scratch("jobs-raw.csv", text);
      check_names(traces::read_philly_sizes(options).status(), options.input);  // Philly's records
      return;
    }
    case 3:
      check_names(traces::parse_device_kinds(text, source).status(), source);
      return;
    case 4:
      check_names(traces::parse_speed_points(text, source).status(), source);
      return;
    case 5:
      check_names(traces::parse_metric_curves(text, source).status(), source);
      return;
    default:
      check_names(traces::parse_packed_pairs(text, source).status(), source);
      return;
  }
}

void fuzz_chakra(const std::uint8_t* data, std::size_t size) {
  const std::string source = "chakra-fuzz.0.et";
  auto rank = traces::parse_chakra_rank(as_text(data, size), source);
  if (!rank) {
    OMNI_CHECK(rank.status().message().rfind(source + ": byte ", 0) == 0,
               "a Chakra error does not name its file and offset: " + rank.status().message());
    return;
  }
  std::set<std::uint64_t> ids;
  for (const traces::ChakraNode& n : rank->nodes) ids.insert(n.id);
  OMNI_CHECK(ids.size() == rank->nodes.size(), "a Chakra rank read with duplicate ids");
  for (const traces::ChakraNode& n : rank->nodes) {
    OMNI_CHECK(n.type != traces::ChakraNodeType::kInvalid && static_cast<int>(n.type) <= 7, "a node of no type");
    for (std::uint64_t d : n.data_deps) OMNI_CHECK(ids.count(d) == 1, "a dependency on an unknown id");
    for (std::uint64_t d : n.ctrl_deps) OMNI_CHECK(ids.count(d) == 1, "a dependency on an unknown id");
  }
}

void fuzz_gpu_power_table(const std::uint8_t* data, std::size_t size) {
  const std::string source = "power-fuzz.csv";
  auto rows = traces::parse_gpu_power_rows(as_text(data, size), source);
  if (!rows) {
    // "power-fuzz.csv:N: ...": the file and a line number.
    const std::string& m = rows.status().message();
    const std::size_t digits = source.size() + 1;
    OMNI_CHECK(
        m.rfind(source + ":", 0) == 0 && m.size() > digits && std::isdigit(static_cast<unsigned char>(m[digits])) != 0,
        "a power-table error does not name its file and line: " + m);
    return;
  }
  const std::vector<traces::GpuPowerRow> copy = *rows;
  auto table = traces::GpuPowerTable::create(std::move(rows).value());
  OMNI_CHECK(table.is_ok(), "rows the parser accepted are refused by the table: " + table.status().message());
  for (const traces::GpuPowerRow& r : copy) {  // every measured point reads back exactly
    auto f = table->figure(r.kind, r.workload, r.batch, static_cast<double>(r.power_limit_w));
    OMNI_CHECK(f.is_ok(), "a measured point does not read back: " + f.status().message());
    OMNI_CHECK(f->time_per_epoch_s == r.figure.time_per_epoch_s && f->average_power_w == r.figure.average_power_w &&
                   f->energy_per_epoch_j == r.figure.energy_per_epoch_j,
               "a measured point reads back different");
    OMNI_CHECK(std::isfinite(f->energy_per_epoch_j) && f->average_power_w > 0.0, "a measured figure not finite > 0");
  }
}

}  // namespace omnilearn::fuzz
