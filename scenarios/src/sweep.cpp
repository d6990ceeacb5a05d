#include "omnilearn/scenarios/sweep.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "map_reader.h"
#include "omnilearn/base/format.h"
#include "omnilearn/base/input_limits.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "yaml_source.h"

namespace omnilearn::scenarios {
namespace {

using detail::MapReader;
using detail::YamlSource;

// A point's name is one folder name: within NAME_MAX (255) with room for a suffix such as ".tmp".
constexpr std::size_t kMaxPointNameBytes = 240;

// The node as one line of flow-style YAML, the form an override value takes.
std::string flow_yaml(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

std::string safe_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '+' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? std::string("_") : out;
}

// Reads a mapping of `key: value` overrides (a named preset, or `set:`).
Status read_override_map(const YamlSource& source, const YAML::Node& node, const std::string& field,
                         std::vector<std::string>& out) {
  if (!node.IsMap())
    return source.error(node, field, "expected a mapping of key: value overrides, got " + detail::describe(node));
  for (auto it = node.begin(); it != node.end(); ++it) {
    out.push_back(it->first.Scalar() + "=" + flow_yaml(it->second));
  }
  return Status::ok();
}

Status check_unique_labels(const YamlSource& source, const YAML::Node& at, const std::string& field,
                           const std::vector<SweepValue>& values) {
  std::set<std::string> seen;
  for (const auto& v : values) {
    if (!seen.insert(v.label).second) return source.error(at, field, "label '" + v.label + "' is used twice");
  }
  return Status::ok();
}

Status read_axis(const YamlSource& source, const std::string& name, const YAML::Node& node, const YAML::Node& labels,
                 SweepAxis& axis) {
  const std::string field = "axes." + name;
  axis.name = name;
  const bool has_labels = labels.IsDefined() && !labels.IsNull();
  if (node.IsSequence() && node.size() > 0) {
    if (has_labels && (!labels.IsSequence() || labels.size() != node.size())) {
      return source.error(
          labels, "labels." + name,
          "expected " + std::to_string(node.size()) + " labels (one per value), got " + detail::describe(labels));
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      SweepValue v;
      if (has_labels) {
        v.label = safe_label(labels[i].IsScalar() ? labels[i].Scalar() : "");
      } else {
        v.label = node[i].IsScalar() ? safe_label(node[i].Scalar()) : "v" + std::to_string(i);
      }
      v.overrides.push_back(name + "=" + flow_yaml(node[i]));
      axis.values.push_back(std::move(v));
    }
  } else if (node.IsMap() && node.size() > 0) {
    if (has_labels) return source.error(labels, "labels." + name, "a named-preset axis names its values");
    for (auto it = node.begin(); it != node.end(); ++it) {
      SweepValue v;
      v.label = safe_label(it->first.Scalar());
      OMNI_RETURN_IF_ERROR(read_override_map(source, it->second, field + "." + it->first.Scalar(), v.overrides));
      axis.values.push_back(std::move(v));
    }
  } else {
    return source.error(
        node, field,
        "expected a non-empty list of values, or a mapping of named presets, got " + detail::describe(node));
  }
  return check_unique_labels(source, node, field, axis.values);
}

}  // namespace

namespace {

// `base` or `bases`: the scenario files, resolved against the sweep file's folder.
Status read_bases(const YamlSource& source, const MapReader& r, const std::string& path, Sweep& sweep) {
  const std::filesystem::path file(path);
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  auto resolve = [&](const std::string& p) {
    return std::filesystem::path(p).is_absolute() ? p : (folder / p).lexically_normal().string();
  };
  OMNI_RETURN_IF_ERROR(r.require_one_of({"base", "bases"}));
  if (r.has("base")) {
    std::string base;
    OMNI_RETURN_IF_ERROR(r.read("base", base));
    sweep.bases.push_back({"", resolve(base)});
    return Status::ok();
  }
  const YAML::Node bases = r.get("bases");
  if (!bases.IsMap() || bases.size() == 0) return r.error_got("bases", "a mapping of label: scenario file");
  std::vector<SweepValue> labels;
  for (auto it = bases.begin(); it != bases.end(); ++it) {
    if (!it->second.IsScalar()) {
      return source.error(it->second, "bases." + it->first.Scalar(),
                          "expected a scenario file, got " + detail::describe(it->second));
    }
    sweep.bases.push_back({safe_label(it->first.Scalar()), resolve(it->second.Scalar())});
    labels.push_back({sweep.bases.back().label, {}});
  }
  return check_unique_labels(source, bases, "bases", labels);
}

// `axes` with their `labels`; every label list names an axis.
Status read_axes(const YamlSource& source, const MapReader& r, Sweep& sweep) {
  const YAML::Node labels = r.get("labels");
  if (r.has("labels") && !labels.IsMap()) return r.error_got("labels", "a mapping of axis: [labels]");
  if (r.has("axes")) {
    const YAML::Node axes = r.get("axes");
    if (!axes.IsMap()) return r.error_got("axes", "a mapping of axis: values");
    for (auto it = axes.begin(); it != axes.end(); ++it) {
      const std::string name = it->first.Scalar();
      SweepAxis axis;
      OMNI_RETURN_IF_ERROR(read_axis(source, name, it->second, r.has("labels") ? labels[name] : YAML::Node(), axis));
      sweep.axes.push_back(std::move(axis));
    }
  }
  if (!r.has("labels")) return Status::ok();
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    const std::string name = it->first.Scalar();
    bool found = false;
    for (const auto& a : sweep.axes) found = found || a.name == name;
    if (!found) return source.error(it->first, "labels." + name, "no axis of that name");
  }
  return Status::ok();
}

// Bounds on what expand() makes: the number of points, and each point's name (a folder name).
Status check_size(const MapReader& r, const Sweep& sweep) {
  double points = static_cast<double>(sweep.bases.size());
  std::size_t name_bytes = sweep.name.size();
  for (const SweepBase& base : sweep.bases) {
    name_bytes = std::max(name_bytes, sweep.name.size() + 1 + base.label.size());
  }
  for (const SweepAxis& axis : sweep.axes) {
    points *= static_cast<double>(axis.values.size());
    std::size_t longest = 0;
    for (const SweepValue& v : axis.values) longest = std::max(longest, v.label.size());
    name_bytes += 1 + longest;
  }
  if (points > static_cast<double>(limits::kMaxSweepPoints)) {
    return r.error(r.has("axes") ? "axes" : "bases", "expected at most " + std::to_string(limits::kMaxSweepPoints) +
                                                         " points (the product of the axes' sizes), got " +
                                                         format_g(points, 6));  // may exceed any integer type
  }
  if (name_bytes > kMaxPointNameBytes) {
    return r.error(r.has("axes") ? "axes" : "name", "expected point names (name-label-label...) of at most " +
                                                        std::to_string(kMaxPointNameBytes) + " bytes, got up to " +
                                                        std::to_string(name_bytes) + " (use shorter labels)");
  }
  return Status::ok();
}

// Every base exists, and all are of one kind (the sweep's).
Status check_bases(const MapReader& r, const std::string& path, Sweep& sweep) {
  for (const SweepBase& base : sweep.bases) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(base.path, ec)) {
      return Status::not_found(path + ": base scenario " + base.path + ": cannot open file" +
                               (ec ? " (" + ec.message() + ")" : std::string()));
    }
  }
  for (std::size_t i = 0; i < sweep.bases.size(); ++i) {
    auto kind = read_scenario_kind(sweep.bases[i].path);
    if (!kind) return kind.status();
    if (i == 0) sweep.kind = *kind;
    if (*kind != sweep.kind) {
      return r.error("bases", "expected bases of one kind, got a " + std::string(scenario_kind_name(sweep.kind)) +
                                  " scenario (" + sweep.bases[0].path + ") and a " + scenario_kind_name(*kind) +
                                  " one (" + sweep.bases[i].path + ")");
    }
  }
  return Status::ok();
}

Result<Sweep> load_sweep_file(const std::string& path) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  YamlSource source(path);
  auto root = source.load(*text);
  if (!root) return root.status();
  auto reader = MapReader::open(source, *root, "", {"name", "base", "bases", "set", "axes", "labels"});
  if (!reader) return reader.status();
  const MapReader& r = *reader;

  Sweep sweep;
  sweep.source_path = path;
  sweep.name = std::filesystem::path(path).stem().string();
  OMNI_RETURN_IF_ERROR(r.read("name", sweep.name));
  sweep.name = safe_label(sweep.name);
  // The name is the prefix of every point's folder and names the sweep's own files.
  if (sweep.name == "." || sweep.name == ".." || sweep.name.size() > limits::kMaxNameBytes) {
    const std::string expected =
        "a name other than '.' or '..', of at most " + std::to_string(limits::kMaxNameBytes) + " bytes";
    if (r.has("name")) return r.error_got("name", expected);
    return Status::invalid_argument(path + ": name: the file's name gives the sweep name '" + sweep.name +
                                    "'; expected " + expected + " (or give `name:`)");
  }
  OMNI_RETURN_IF_ERROR(read_bases(source, r, path, sweep));
  if (r.has("set")) OMNI_RETURN_IF_ERROR(read_override_map(source, r.get("set"), "set", sweep.overrides));
  OMNI_RETURN_IF_ERROR(read_axes(source, r, sweep));
  OMNI_RETURN_IF_ERROR(check_size(r, sweep));
  OMNI_RETURN_IF_ERROR(check_bases(r, path, sweep));
  return sweep;
}

}  // namespace

Result<Sweep> load_sweep(const std::string& path) {
  return detail::parse_guarded(path, [&] { return load_sweep_file(path); });
}

Status check_point(const Sweep& sweep, const SweepPoint& point) {
  const Status st = point.kind == ScenarioKind::kJobs ? load_jobs_scenario(point.base_path, point.overrides).status()
                                                      : load_scenario(point.base_path, point.overrides).status();
  if (st.is_ok()) return st;
  return Status::invalid_argument(sweep.source_path + ": point '" + point.name + "': " + st.message());
}

std::vector<SweepPoint> expand(const Sweep& sweep) {
  std::vector<SweepPoint> points;
  // Odometer over (base, axis 0, axis 1, ...), the last digit fastest.
  std::vector<std::size_t> sizes{sweep.bases.size()};
  for (const auto& a : sweep.axes) sizes.push_back(a.values.size());
  for (std::size_t s : sizes) {
    if (s == 0) return points;
  }
  std::vector<std::size_t> digit(sizes.size(), 0);
  for (std::size_t index = 0;; ++index) {
    SweepPoint p;
    p.index = index;
    p.kind = sweep.kind;
    const SweepBase& base = sweep.bases[digit[0]];
    p.base_path = base.path;
    p.name = sweep.name;
    if (!base.label.empty()) p.name += "-" + base.label;
    if (sweep.bases.size() > 1) p.coordinates.emplace_back("base", base.label);
    p.overrides = sweep.overrides;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const SweepValue& v = sweep.axes[a].values[digit[a + 1]];
      p.name += "-" + v.label;
      p.coordinates.emplace_back(sweep.axes[a].name, v.label);
      p.overrides.insert(p.overrides.end(), v.overrides.begin(), v.overrides.end());
    }
    points.push_back(std::move(p));
    std::size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++digit[d] < sizes[d]) break;
      digit[d] = 0;
      if (d == 0) return points;
    }
  }
}

}  // namespace omnilearn::scenarios
