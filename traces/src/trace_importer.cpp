#include "omnilearn/traces/trace_importer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "importers.h"

namespace omnilearn::traces {
namespace {

constexpr std::array<std::pair<ImportFormat, std::string_view>, 10> kFormatNames{{
    {ImportFormat::kAzureV1, "azure-v1"},
    {ImportFormat::kBitbrains, "bitbrains"},
    {ImportFormat::kAlibaba2018, "alibaba-2018"},
    {ImportFormat::kAlibabaGenAI, "alibaba-genai"},
    {ImportFormat::kPhilly, "philly"},
    {ImportFormat::kHelios, "helios"},
    {ImportFormat::kAzureNoise2024, "azure-noise"},
    {ImportFormat::kLanl, "lanl"},
    {ImportFormat::kTitan, "titan"},
    {ImportFormat::kAlibaba2017, "alibaba-2017"},
}};

}  // namespace

std::string_view import_format_name(ImportFormat format) {
  for (const auto& [f, name] : kFormatNames) {
    if (f == format) return name;
  }
  return "unknown";
}

std::optional<ImportFormat> parse_import_format(std::string_view name) {
  for (const auto& [f, n] : kFormatNames) {
    if (n == name) return f;
  }
  return std::nullopt;
}

std::vector<ImportFormat> all_import_formats() {
  std::vector<ImportFormat> out;
  for (const auto& entry : kFormatNames) out.push_back(entry.first);
  return out;
}

Result<AvailabilityTrace> import_trace(const ImportOptions& options) {
  if (options.input.empty()) return Status::invalid_argument("import: no input path given");
  switch (options.format) {
    case ImportFormat::kAzureV1: return detail::import_azure_v1(options);
    case ImportFormat::kBitbrains: return detail::import_bitbrains(options);
    case ImportFormat::kAlibaba2018: return detail::import_alibaba_2018(options);
    case ImportFormat::kAlibabaGenAI: return detail::import_alibaba_genai(options);
    case ImportFormat::kPhilly: return detail::import_philly(options);
    case ImportFormat::kHelios: return detail::import_helios(options);
    case ImportFormat::kAzureNoise2024: return detail::import_azure_noise_2024(options);
    case ImportFormat::kLanl: return detail::import_lanl(options);
    case ImportFormat::kTitan: return detail::import_titan(options);
    case ImportFormat::kAlibaba2017: return detail::import_alibaba_2017(options);
  }
  return Status::invalid_argument("import: unknown format");
}

namespace detail {

Result<Columns> read_named_columns(LineReader& in, std::initializer_list<std::string_view> names,
                                   std::string_view first, std::string_view what) {
  std::string line;
  OMNI_RETURN_IF_ERROR(in.first_record(line, first));
  const std::vector<std::string> header = split_fields(line);
  Columns columns{{}, header.size()};
  std::string listed;  // "A, B or C"
  bool all = true;
  for (std::string_view name : names) {
    const auto col = find_column(header, name);
    all = all && col.has_value();
    columns.index.push_back(col.value_or(0));
    if (!listed.empty()) listed += columns.index.size() == names.size() ? " or " : ", ";
    listed += name;
  }
  if (!all) return in.error("header '" + line.substr(0, 60) + "' lacks " + listed + "; expected " + std::string(what));
  return columns;
}

Status for_each_record(LineReader& in, std::size_t width,
                       const std::function<Status(const std::vector<std::string>&, const std::string&)>& row) {
  std::string line;
  while (in.next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != width) {
      return in.error("row has " + std::to_string(f.size()) + " fields; expected " + std::to_string(width));
    }
    OMNI_RETURN_IF_ERROR(row(f, line));
  }
  return in.status();  // a quoted field never closed
}

double availability_from_percent(double percent) {
  const double a = std::clamp(1.0 - percent / 100.0, 0.0, 1.0);
  return std::round(a * 1e5) / 1e5;
}

Result<AvailabilityTrace> select_and_build(std::vector<RawSeries> nodes, const ImportOptions& options,
                                           Seconds duration_s) {
  std::vector<RawSeries> chosen;
  if (!options.nodes.empty()) {
    for (const std::string& name : options.nodes) {
      auto it = std::find_if(nodes.begin(), nodes.end(), [&](const RawSeries& s) { return s.name == name; });
      if (it == nodes.end()) {
        return Status::not_found(options.input + ": no node named '" + name + "' (names look like '" +
                                 (nodes.empty() ? std::string("?") : nodes.front().name) + "')");
      }
      chosen.push_back(*it);
    }
  } else {
    std::vector<std::size_t> order(nodes.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (options.selection == NodeSelection::kMostActive) {
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return nodes[a].score > nodes[b].score; });
    }
    const std::size_t keep = options.max_workers == 0 ? order.size() : std::min(order.size(), options.max_workers);
    order.resize(keep);
    std::sort(order.begin(), order.end());  // keep the source order among the chosen
    for (std::size_t i : order) chosen.push_back(std::move(nodes[i]));
  }
  if (chosen.empty()) return Status::invalid_argument(options.input + ": no nodes to import");
  // Times are rounded to 1 ms: absolute clocks minus a base leave float noise that the file would carry.
  const auto ms = [](Seconds t) { return std::round(t * 1e3) / 1e3; };
  std::vector<WorkerSeries> workers;
  for (RawSeries& s : chosen) {
    std::vector<TracePoint> points;
    for (const TracePoint& p : s.points) {
      const Seconds t = ms(p.time_s);
      if (!points.empty() && t <= points.back().time_s) {
        points.back().fraction = p.fraction;  // later sample in the same millisecond wins
      } else {
        points.push_back({t, p.fraction});
      }
    }
    workers.push_back({std::move(s.name), std::move(points)});
  }
  auto trace = AvailabilityTrace::create(std::move(workers), ms(duration_s));
  if (!trace.is_ok()) return trace.status().with_context(options.input);
  return trace;
}

std::vector<TracePoint> points_from_down_intervals(std::vector<std::pair<Seconds, Seconds>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<TracePoint> points{{0.0, 1.0}};
  Seconds down_until = -1.0;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (start <= down_until) {  // overlaps or touches the current down period: extend it
      if (end > down_until) {
        down_until = end;
        points.back().time_s = end;
      }
      continue;
    }
    if (start == 0.0) {
      points.front().fraction = 0.0;
    } else {
      points.push_back({start, 0.0});
    }
    points.push_back({end, 1.0});
    down_until = end;
  }
  return points;
}

Result<AvailabilityTrace> occupancy_to_trace(const std::vector<std::pair<Seconds, double>>& share,
                                             std::size_t nodes, std::uint64_t seed, Seconds duration_s) {
  if (nodes == 0) nodes = 16;
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> taken;  // in the order taken
  std::vector<std::size_t> free_nodes(nodes);
  std::iota(free_nodes.begin(), free_nodes.end(), std::size_t{0});
  std::vector<WorkerSeries> workers(nodes);
  for (std::size_t k = 0; k < nodes; ++k) workers[k].name = std::string("node").append(std::to_string(k));
  auto pick = [&rng](std::vector<std::size_t>& from) {
    const std::size_t i = static_cast<std::size_t>(rng() % from.size());
    const std::size_t node = from[i];
    from.erase(from.begin() + static_cast<std::ptrdiff_t>(i));
    return node;
  };
  for (const auto& [t, s] : share) {
    const auto want = static_cast<std::size_t>(std::lround(std::clamp(s, 0.0, 1.0) * static_cast<double>(nodes)));
    std::vector<std::pair<std::size_t, double>> changed;
    while (taken.size() < want) {
      const std::size_t n = pick(free_nodes);
      taken.push_back(n);
      changed.emplace_back(n, 0.0);
    }
    while (taken.size() > want) {
      const std::size_t n = pick(taken);
      free_nodes.push_back(n);
      changed.emplace_back(n, 1.0);
    }
    if (workers[0].points.empty()) {  // the first row sets every node
      for (std::size_t k = 0; k < nodes; ++k) workers[k].points.push_back({t, 1.0});
    }
    for (const auto& [n, f] : changed) {
      auto& pts = workers[n].points;
      if (pts.back().time_s == t) {
        pts.back().fraction = f;
      } else {
        pts.push_back({t, f});
      }
    }
  }
  return AvailabilityTrace::create(std::move(workers), duration_s);
}

}  // namespace detail
}  // namespace omnilearn::traces
