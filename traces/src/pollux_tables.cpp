#include "omnilearn/traces/pollux_tables.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::traces {
namespace {

// The largest local batch Pollux's simulator lets an application run (applications.py: yolov3's max_local_bsz 8;
// the others the largest measured one).
constexpr struct {
  const char* app;
  double max_local_bsz;
} kMaxLocalBatch[] = {{"yolov3", 8.0}};

// Reads a table's data records: comment lines (#) and the header skipped, `columns` fields each.
template <class F>
Status read_rows(const std::string& path, const std::vector<std::string>& header, F&& row) {
  auto reader = LineReader::open(path);
  if (!reader.is_ok()) return reader.status();
  std::string line;
  bool seen_header = false;
  while (reader->next(line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = split_fields(line);
    if (!seen_header) {
      if (f != header) {
        std::string want;
        for (const std::string& h : header) want += (want.empty() ? "" : ",") + h;
        return reader->error("expected the header " + want);
      }
      seen_header = true;
      continue;
    }
    if (f.size() != header.size()) {
      return reader->error("expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    }
    const Status st = row(f, *reader);
    if (!st.is_ok()) return st;
  }
  OMNI_RETURN_IF_ERROR(reader->status());
  if (!seen_header) return Status::invalid_argument(path + ": no header (an empty table)");
  return Status::ok();
}

// Linear interpolation of (step, sync) in the local batch over rows sorted by it; clamped outside.
PolluxStepTime interpolate(const std::vector<std::pair<double, std::pair<double, double>>>& rows, double b) {
  PolluxStepTime t;
  if (b <= rows.front().first || b >= rows.back().first) {
    const auto& r = b <= rows.front().first ? rows.front() : rows.back();
    t.step_s = r.second.first;
    t.sync_s = r.second.second;
    t.clamped = b < rows.front().first || b > rows.back().first;
    return t;
  }
  std::size_t i = 1;
  while (rows[i].first < b) ++i;
  const auto& lo = rows[i - 1];
  const auto& hi = rows[i];
  const double f = (b - lo.first) / (hi.first - lo.first);
  t.step_s = lo.second.first + f * (hi.second.first - lo.second.first);
  t.sync_s = lo.second.second + f * (hi.second.second - lo.second.second);
  return t;
}

// The lexicographically smallest rotation of the placement without its zeros, as Pollux normalises it.
std::string canonical(const std::vector<int>& placement) {
  std::vector<int> p;
  for (int g : placement) {
    if (g > 0) p.push_back(g);
  }
  std::vector<int> best = p;
  for (std::size_t i = 1; i < p.size(); ++i) {
    std::vector<int> r(p.begin() + static_cast<std::ptrdiff_t>(i), p.end());
    r.insert(r.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(i));
    best = std::min(best, r);
  }
  std::string id;
  for (int g : best) id += std::to_string(g);
  return id;
}

// (x, y0, y1) at x between two points, linearly.
std::pair<double, double> lerp(double x, double x0, std::pair<double, double> y0, double x1,
                               std::pair<double, double> y1) {
  if (x1 == x0) return y0;
  const double f = (x - x0) / (x1 - x0);
  return {y0.first + f * (y1.first - y0.first), y0.second + f * (y1.second - y0.second)};
}

}  // namespace

std::string PolluxJobModel::application(const std::string& model) {
  if (model == "resnet18") return "cifar10";
  if (model == "resnet50") return "imagenet";
  for (const char* app : {"bert", "deepspeech2", "yolov3", "ncf"}) {
    if (model == app) return model;
  }
  return "";
}

Result<PolluxJobModel> PolluxJobModel::read(const std::string& steps_csv, const std::string& efficiency_csv) {
  std::map<std::string, App> apps;
  // Placement rows grouped by (nodes, replicas, local batch): Pollux's mean over the placements of that size.
  std::map<std::string, std::map<std::tuple<int, int, double>, std::pair<std::pair<double, double>, int>>> sums;
  OMNI_RETURN_IF_ERROR(read_rows(
      steps_csv, {"app", "placement", "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"},
      [&](const std::vector<std::string>& f, const LineReader& r) -> Status {
        const auto nodes = parse_double(f[2]), replicas = parse_double(f[3]), bsz = parse_double(f[4]),
                   step = parse_double(f[5]), sync = parse_double(f[6]);
        if (f[0].empty() || !nodes || !replicas || !bsz || !step || !sync || *nodes < 1 || *replicas < *nodes ||
            *bsz < 1 || *step <= 0.0 || *sync < 0.0 || *nodes != std::floor(*nodes) ||
            *replicas != std::floor(*replicas) || *nodes > 1024 || *replicas > 65536) {
          return r.error("expected an app, whole nodes >= 1, replicas >= nodes, local_bsz >= 1, step_time > 0 and "
                         "sync_time >= 0");
        }
        App& a = apps[f[0]];
        const StepRow row{*bsz, *step, *sync};
        const int n = static_cast<int>(*nodes), rep = static_cast<int>(*replicas);
        if (!f[1].empty()) {
          a.placements[f[1]].push_back(row);
          auto& s = sums[f[0]][{n, rep, *bsz}];
          s.first.first += *step;
          s.first.second += *sync;
          ++s.second;
        } else {
          a.by_size[{n, rep}].push_back(row);
        }
        if (a.min_local_bsz == 0.0 || *bsz < a.min_local_bsz) a.min_local_bsz = *bsz;
        a.max_local_bsz = std::max(a.max_local_bsz, *bsz);
        return Status::ok();
      }));
  for (auto& [app, groups] : sums) {
    for (const auto& [key, s] : groups) {
      apps[app].by_size[{std::get<0>(key), std::get<1>(key)}].push_back(
          {std::get<2>(key), s.first.first / s.second, s.first.second / s.second});
    }
  }
  OMNI_RETURN_IF_ERROR(read_rows(
      efficiency_csv, {"app", "batch", "epoch", "progress", "grad_sqr", "grad_var"},
      [&](const std::vector<std::string>& f, const LineReader& r) -> Status {
        const auto batch = parse_double(f[1]), epoch = parse_double(f[2]), progress = parse_double(f[3]),
                   sqr = parse_double(f[4]), var = parse_double(f[5]);
        if (!apps.count(f[0])) return r.error("app '" + f[0] + "' has no step times");
        if (!batch || !epoch || !progress || !sqr || !var || *batch < 1 || *batch > 1e9 ||
            *batch != std::floor(*batch) || *progress < 0.0 || *sqr < 0.0 || *var < 0.0) {
          return r.error("expected a whole batch >= 1, progress >= 0, grad_sqr >= 0 and grad_var >= 0");
        }
        auto& rows = apps[f[0]].validation[static_cast<std::int64_t>(*batch)];
        if (*epoch != static_cast<double>(rows.size())) {
          return r.error("expected epoch " + std::to_string(rows.size()) + " of batch " + f[1] + " next");
        }
        rows.push_back({*progress, *sqr, *var});
        return Status::ok();
      }));
  for (auto& [name, a] : apps) {
    for (auto& [_, v] : a.placements) {
      std::sort(v.begin(), v.end(), [](const StepRow& x, const StepRow& y) { return x.local_bsz < y.local_bsz; });
    }
    for (auto& [_, v] : a.by_size) {
      std::sort(v.begin(), v.end(), [](const StepRow& x, const StepRow& y) { return x.local_bsz < y.local_bsz; });
    }
    for (const auto& m : kMaxLocalBatch) {
      if (name == m.app) a.max_local_bsz = m.max_local_bsz;
    }
    if (a.validation.empty()) return Status::invalid_argument(efficiency_csv + ": app '" + name + "' has no rows");
  }
  return PolluxJobModel(std::move(apps));
}

std::vector<std::string> PolluxJobModel::applications() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : apps_) out.push_back(name);
  return out;
}

Result<const PolluxJobModel::App*> PolluxJobModel::find(const std::string& app) const {
  const auto it = apps_.find(app);
  if (it != apps_.end()) return &it->second;
  std::string known;
  for (const auto& [name, _] : apps_) known += (known.empty() ? "" : ", ") + name;
  return Status::invalid_argument("application '" + app + "' has no measured steps (measured: " + known + ")");
}

std::int64_t PolluxJobModel::init_batch(const std::string& app) const {
  const auto it = apps_.find(app);
  return it == apps_.end() ? 0 : it->second.validation.begin()->first;
}

std::int64_t PolluxJobModel::max_batch(const std::string& app) const {
  const auto it = apps_.find(app);
  return it == apps_.end() ? 0 : it->second.validation.rbegin()->first;
}

Result<PolluxStepTime> PolluxJobModel::step_time(const std::string& app, const std::vector<int>& placement,
                                                 double local_bsz) const {
  auto found = find(app);
  if (!found.is_ok()) return found.status();
  const App& a = **found;
  const std::string id = canonical(placement);
  if (id.empty() || !(local_bsz > 0.0)) {
    return Status::invalid_argument(app + ": expected a placement with a GPU and a local batch > 0");
  }
  using Points = std::vector<std::pair<double, std::pair<double, double>>>;
  const auto points = [](const std::vector<StepRow>& rows) {
    Points p;
    for (const StepRow& r : rows) p.push_back({r.local_bsz, {r.step_s, r.sync_s}});
    return p;
  };
  if (const auto it = a.placements.find(id); it != a.placements.end()) {
    PolluxStepTime t = interpolate(points(it->second), local_bsz);
    t.measured_placement = true;
    return t;
  }
  int nodes = 0, replicas = 0;
  for (int g : placement) {
    if (g > 0) {
      ++nodes;
      replicas += g;
    }
  }
  nodes = std::min(nodes, 16);
  // The measured node counts around `nodes`, and at each the replicas around `replicas` (clamped to those measured).
  std::vector<int> levels;
  for (const auto& [size, _] : a.by_size) {
    if (levels.empty() || levels.back() != size.first) levels.push_back(size.first);
  }
  auto hi = std::lower_bound(levels.begin(), levels.end(), nodes);
  if (hi == levels.end()) hi = std::prev(levels.end());
  const int n1 = *hi;
  const int n0 = (*hi == nodes || hi == levels.begin()) ? *hi : *std::prev(hi);
  bool clamped = false;
  const auto at_level = [&](int n) {
    std::vector<int> reps;
    for (const auto& [size, _] : a.by_size) {
      if (size.first == n) reps.push_back(size.second);
    }
    const int r = std::clamp(replicas, reps.front(), reps.back());
    auto r_hi = std::lower_bound(reps.begin(), reps.end(), r);
    const int r1 = *r_hi;
    const int r0 = (*r_hi == r || r_hi == reps.begin()) ? *r_hi : *std::prev(r_hi);
    const PolluxStepTime t0 = interpolate(points(a.by_size.at({n, r0})), local_bsz);
    const PolluxStepTime t1 = interpolate(points(a.by_size.at({n, r1})), local_bsz);
    clamped = clamped || t0.clamped || t1.clamped;
    return lerp(r, r0, {t0.step_s, t0.sync_s}, r1, {t1.step_s, t1.sync_s});
  };
  const auto v = lerp(std::clamp(nodes, n0, n1), n0, at_level(n0), n1, at_level(n1));
  PolluxStepTime t;
  t.step_s = v.first;
  t.sync_s = v.second;
  t.clamped = clamped;
  return t;
}

Result<PolluxJobStep> PolluxJobModel::job_step(const std::string& app, const std::vector<int>& placement,
                                               std::int64_t global_batch) const {
  auto found = find(app);
  if (!found.is_ok()) return found.status();
  const App& a = **found;
  std::int64_t replicas = 0;
  for (int g : placement) replicas += std::max(0, g);
  if (replicas < 1 || global_batch < 1) {
    return Status::invalid_argument(app + ": expected a placement with a GPU and a global batch >= 1");
  }
  constexpr double kEps = 1e-8;  // Pollux's tolerance on its ceilings
  const double local = std::ceil(static_cast<double>(global_batch) / static_cast<double>(replicas) - kEps);
  auto accum = static_cast<std::int64_t>(std::ceil(local / a.max_local_bsz - kEps)) - 1;
  if (replicas == 1 && global_batch > init_batch(app)) accum = std::max<std::int64_t>(1, accum);
  auto atomic = static_cast<std::int64_t>(std::ceil(local / static_cast<double>(accum + 1) - kEps));
  const std::int64_t count = replicas * (accum + 1);
  atomic = std::min(atomic, max_batch(app) / count);
  if (atomic < 1) {
    return Status::invalid_argument(app + ": global batch " + std::to_string(global_batch) + " on " +
                                    std::to_string(replicas) + " GPUs leaves no local batch");
  }
  auto t = step_time(app, placement, static_cast<double>(atomic));
  if (!t.is_ok()) return t.status();
  PolluxJobStep s;
  s.measured = *t;
  s.atomic_bsz = atomic;
  s.accum_steps = accum;
  s.batch = count * atomic;
  s.seconds = t->step_s + static_cast<double>(accum) * (t->step_s - t->sync_s);
  return s;
}

Result<std::pair<double, double>> PolluxJobModel::grad_stats(const App& a, const std::string& app, double batch,
                                                             std::int64_t epoch) const {
  const auto& v = a.validation;
  if (batch < static_cast<double>(v.begin()->first) || batch > static_cast<double>(v.rbegin()->first)) {
    return Status::invalid_argument(app + ": batch " + shortest_number(batch) + " is outside the validated " +
                                    std::to_string(v.begin()->first) + " to " + std::to_string(v.rbegin()->first));
  }
  auto hi = v.lower_bound(static_cast<std::int64_t>(std::ceil(batch)));
  auto lo = hi;
  if (static_cast<double>(hi->first) != batch) --lo;
  const auto stats = [&](const std::vector<EpochStats>& rows) -> Result<std::pair<double, double>> {
    if (epoch < 0 || epoch >= static_cast<std::int64_t>(rows.size())) {
      return Status::invalid_argument(app + ": epoch " + std::to_string(epoch) + " is past the " +
                                      std::to_string(rows.size()) + " validated");
    }
    return std::pair<double, double>{rows[epoch].grad_sqr, rows[epoch].grad_var};
  };
  auto s_lo = stats(lo->second);
  if (!s_lo.is_ok()) return s_lo.status();
  auto s_hi = stats(hi->second);
  if (!s_hi.is_ok()) return s_hi.status();
  return lerp(batch, static_cast<double>(lo->first), *s_lo, static_cast<double>(hi->first), *s_hi);
}

Result<double> PolluxJobModel::efficiency(const std::string& app, double batch, std::int64_t epoch) const {
  auto found = find(app);
  if (!found.is_ok()) return found.status();
  auto stats = grad_stats(**found, app, batch, epoch);
  if (!stats.is_ok()) return stats.status();
  const auto [sqr, var] = *stats;
  const double scale = batch / static_cast<double>(init_batch(app));
  const double denom = var / scale + sqr;
  const double gain = denom > 0.0 ? (var + sqr) / denom : 1.0;
  return gain / scale;
}

Result<double> PolluxJobModel::samples_needed(const std::string& app, double batch, double epochs) const {
  if (!(epochs > 0.0)) return Status::invalid_argument(app + ": expected epochs > 0");
  return samples_between(app, batch, 0.0, epochs);
}

Result<double> PolluxJobModel::epoch_samples(const std::string& app, double batch, std::int64_t e) const {
  auto found = find(app);
  if (!found.is_ok()) return found.status();
  // Pollux's progress at the end of epoch e: the least over the validated batches (get_progress).
  const auto progress = [&](std::int64_t end) -> std::optional<double> {
    if (end == 0) return 0.0;
    std::optional<double> least;
    for (const auto& [_, rows] : (*found)->validation) {
      if (end - 1 >= static_cast<std::int64_t>(rows.size())) return std::nullopt;
      least = least ? std::min(*least, rows[end - 1].progress) : rows[end - 1].progress;
    }
    return least;
  };
  const auto p0 = progress(e), p1 = progress(e + 1);
  if (!p0 || !p1) {
    return Status::invalid_argument(app + ": epoch " + std::to_string(e + 1) + " is more than the " +
                                    std::to_string(e) + " validated at every batch");
  }
  auto eff = efficiency(app, batch, e);
  if (!eff.is_ok()) return eff.status();
  return (*p1 - *p0) * static_cast<double>(init_batch(app)) / *eff;
}

Result<double> PolluxJobModel::samples_between(const std::string& app, double batch, double from_epochs,
                                               double to_epochs) const {
  if (!(from_epochs >= 0.0 && to_epochs >= from_epochs && std::isfinite(to_epochs))) {
    return Status::invalid_argument(app + ": expected 0 <= from_epochs <= to_epochs, got " +
                                    shortest_number(from_epochs) + " and " + shortest_number(to_epochs));
  }
  double samples = 0.0;
  for (auto e = static_cast<std::int64_t>(std::floor(from_epochs)); static_cast<double>(e) < to_epochs; ++e) {
    auto cost = epoch_samples(app, batch, e);
    if (!cost.is_ok()) return cost.status();
    const double lo = std::max(from_epochs, static_cast<double>(e));
    const double hi = std::min(to_epochs, static_cast<double>(e + 1));
    samples += (hi - lo) * *cost;
  }
  return samples;
}

Result<double> PolluxJobModel::epochs_after(const std::string& app, double batch, double from_epochs, double samples,
                                            double max_epochs) const {
  double at = from_epochs;
  while (samples > 0.0 && at < max_epochs) {
    const auto e = static_cast<std::int64_t>(std::floor(at));
    auto cost = epoch_samples(app, batch, e);
    if (!cost.is_ok()) return cost.status();
    const double end = std::min(max_epochs, static_cast<double>(e + 1));
    const double need = (end - at) * *cost;
    if (samples < need) return at + samples / *cost;
    samples -= need;
    at = end;
  }
  return std::min(at, max_epochs);
}

double PolluxJobModel::min_local_batch(const std::string& app) const {
  auto found = find(app);
  return found.is_ok() ? (*found)->min_local_bsz : 0.0;
}

}  // namespace omnilearn::traces
