#include "map_reader.h"

#include <cmath>
#include <limits>

#include "omnilearn/scenarios/quantity_parser.h"

namespace omnilearn::scenarios::detail {
namespace {

std::string number_word(Range range, bool integer) {
  const std::string noun = integer ? "an integer" : "a number";
  switch (range) {
    case Range::kAny: return noun;
    case Range::kPositive: return integer ? "a positive integer" : "a positive number";
    case Range::kNonNegative: return noun + " >= 0";
    case Range::kUnit: return noun + " in [0, 1]";
    case Range::kOpenUnit: return noun + " in (0, 1]";
  }
  return noun;
}

}  // namespace

std::string range_violation(double value, Range range, bool integer) {
  bool ok = true;
  switch (range) {
    case Range::kAny: break;
    case Range::kPositive: ok = value > 0.0; break;
    case Range::kNonNegative: ok = value >= 0.0; break;
    case Range::kUnit: ok = value >= 0.0 && value <= 1.0; break;
    case Range::kOpenUnit: ok = value > 0.0 && value <= 1.0; break;
  }
  return ok ? std::string() : number_word(range, integer);
}

Status read_number_node(const YamlSource& source, const YAML::Node& node, const std::string& field, double& out,
                        Range range) {
  std::optional<double> v = node.IsScalar() ? parse_number(node.Scalar()) : std::nullopt;
  if (!v) return source.error(node, field, "expected " + number_word(range, false) + ", got " + describe(node));
  if (std::string bad = range_violation(*v, range, false); !bad.empty()) {
    return source.error(node, field, "expected " + bad + ", got " + describe(node));
  }
  out = *v;
  return Status::ok();
}

Result<MapReader> MapReader::open(const YamlSource& source, const YAML::Node& node, std::string path,
                                  std::initializer_list<std::string_view> allowed) {
  if (!node.IsMap()) return source.error(node, path, "expected a mapping, got " + describe(node));
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    bool known = false;
    std::string expected;
    for (std::string_view a : allowed) {
      known = known || a == key;
      expected += (expected.empty() ? "" : ", ") + std::string(a);
    }
    if (!known) {
      const std::string field = path.empty() ? key : path + "." + key;
      return source.error(it->first, field, "unknown key (expected one of: " + expected + ")");
    }
  }
  return MapReader(source, node, std::move(path));
}

bool MapReader::has(std::string_view key) const {
  const YAML::Node n = node_[std::string(key)];
  return n.IsDefined() && !n.IsNull();
}

YAML::Node MapReader::get(std::string_view key) const { return node_[std::string(key)]; }

std::string MapReader::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Status MapReader::error(std::string_view key, std::string_view what) const {
  const YAML::Node value = get(key);
  // A value set by an override has no mark: the source then names the override.
  if (value.IsDefined() && value.Mark().is_null()) return source_->error(value, field(key), what);
  // Otherwise the key's line (a block value starts on the next line, which would mislead).
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return source_->error(it->first, field(key), what);
  }
  return source_->error(node_, field(key), what);
}

Status MapReader::error_got(std::string_view key, std::string_view expected) const {
  return error(key, "expected " + std::string(expected) + ", got " + describe(get(key)));
}

Status MapReader::require_one_of(std::initializer_list<std::string_view> keys, bool at_most_one) const {
  std::vector<std::string_view> present;
  std::string names;
  for (std::string_view k : keys) {
    if (has(k)) present.push_back(k);
    names += (names.empty() ? "" : ", ") + std::string(k);
  }
  if (present.size() > 1) return error(present[1], "give only one of " + names);
  if (present.empty() && !at_most_one) {
    return source_->error(node_, path_.empty() ? "(top level)" : path_, "expected one of " + names);
  }
  return Status::ok();
}

Status MapReader::read(std::string_view key, double& out, Range range) const {
  if (!has(key)) return Status::ok();
  return read_number_node(*source_, get(key), field(key), out, range);
}

Status MapReader::read(std::string_view key, std::int64_t& out, Range range) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  std::optional<double> v = n.IsScalar() ? parse_number(n.Scalar()) : std::nullopt;
  const bool integral = v && std::floor(*v) == *v && std::fabs(*v) < 9.0e15;
  if (!integral) return error_got(key, number_word(range, true));
  if (std::string bad = range_violation(*v, range, true); !bad.empty()) return error_got(key, bad);
  out = static_cast<std::int64_t>(*v);
  return Status::ok();
}

Status MapReader::read(std::string_view key, int& out, Range range) const {
  std::int64_t v = out;
  OMNI_RETURN_IF_ERROR(read(key, v, range));
  if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min()) {
    return error_got(key, "an integer that fits in 32 bits");
  }
  out = static_cast<int>(v);
  return Status::ok();
}

Status MapReader::read(std::string_view key, std::uint64_t& out) const {
  std::int64_t v = static_cast<std::int64_t>(out);
  OMNI_RETURN_IF_ERROR(read(key, v, Range::kNonNegative));
  out = static_cast<std::uint64_t>(v);
  return Status::ok();
}

Status MapReader::read(std::string_view key, bool& out) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  if (s == "true" || s == "True" || s == "yes" || s == "on") {
    out = true;
  } else if (s == "false" || s == "False" || s == "no" || s == "off") {
    out = false;
  } else {
    return error_got(key, "true or false");
  }
  return Status::ok();
}

Status MapReader::read(std::string_view key, std::string& out) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  if (!n.IsScalar() || n.Scalar().empty()) return error_got(key, "a non-empty string");
  out = n.Scalar();
  return Status::ok();
}

Status MapReader::read_bandwidth(std::string_view key, double& out_Bps) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  std::optional<double> v = n.IsScalar() ? parse_bandwidth_Bps(n.Scalar()) : std::nullopt;
  if (!v || *v <= 0.0) return error_got(key, "a positive bandwidth such as 10Gbps, 1.25GBps or 1.25e9 (bytes/s)");
  out_Bps = *v;
  return Status::ok();
}

Status MapReader::read_duration(std::string_view key, double& out_s) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  std::optional<double> v = n.IsScalar() ? parse_duration_s(n.Scalar()) : std::nullopt;
  if (!v) return error_got(key, "a duration >= 0 such as 50us, 20ms, 1.5s or 3600 (seconds)");
  out_s = *v;
  return Status::ok();
}

Status MapReader::read_numbers(std::string_view key, std::vector<double>& out, Range range) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  if (!n.IsSequence()) return error_got(key, "a sequence of numbers");
  std::vector<double> values;
  for (std::size_t i = 0; i < n.size(); ++i) {
    double v = 0.0;
    OMNI_RETURN_IF_ERROR(read_number_node(*source_, n[i], field(key) + "[" + std::to_string(i) + "]", v, range));
    values.push_back(v);
  }
  out = std::move(values);
  return Status::ok();
}

Status MapReader::read_strings(std::string_view key, std::vector<std::string>& out) const {
  if (!has(key)) return Status::ok();
  const YAML::Node n = get(key);
  if (!n.IsSequence()) return error_got(key, "a sequence of strings");
  std::vector<std::string> values;
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      return source_->error(n[i], field(key) + "[" + std::to_string(i) + "]",
                            "expected a string, got " + describe(n[i]));
    }
    values.push_back(n[i].Scalar());
  }
  out = std::move(values);
  return Status::ok();
}

}  // namespace omnilearn::scenarios::detail

