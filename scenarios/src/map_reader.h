// MapReader: typed, checked access to one YAML mapping of a scenario file. Knows the mapping's field path
// ("cluster.nodes[2]") so every error names file, line and field. Unknown keys are errors. Private to
// scenarios/; one thread at a time.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/enum_names.h"
#include "yaml_source.h"

namespace omnilearn::scenarios::detail {

enum class Range { kAny, kPositive, kNonNegative, kUnit, kOpenUnit };  // kUnit: [0, 1], kOpenUnit: (0, 1]

class MapReader {
 public:
  // Checks that `node` is a mapping whose keys are all in `allowed`.
  static Result<MapReader> open(const YamlSource& source, const YAML::Node& node, std::string path,
                                std::initializer_list<std::string_view> allowed);

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  bool has(std::string_view key) const;
  YAML::Node get(std::string_view key) const;
  std::string field(std::string_view key) const;
  const YamlSource& source() const { return *source_; }

  // An error at the key's value (or at the mapping itself when the key is absent).
  Status error(std::string_view key, std::string_view what) const;
  Status error_got(std::string_view key, std::string_view expected) const;  // "expected X, got Y"
  // An error unless exactly one (at_most_one: at most one) of `keys` is present.
  Status require_one_of(std::initializer_list<std::string_view> keys, bool at_most_one = false) const;

  // Readers leave `out` unchanged when the key is absent, so defaults stay in place.
  Status read(std::string_view key, double& out, Range range = Range::kAny) const;
  Status read(std::string_view key, std::int64_t& out, Range range = Range::kAny) const;
  Status read(std::string_view key, int& out, Range range = Range::kAny) const;
  Status read(std::string_view key, std::uint64_t& out) const;
  Status read(std::string_view key, bool& out) const;
  Status read(std::string_view key, std::string& out) const;
  Status read_bandwidth(std::string_view key, double& out_Bps) const;
  Status read_duration(std::string_view key, double& out_s) const;
  Status read_numbers(std::string_view key, std::vector<double>& out, Range range = Range::kAny) const;
  Status read_strings(std::string_view key, std::vector<std::string>& out) const;

  template <typename E>
  Status read_choice(std::string_view key, E& out, std::initializer_list<std::pair<std::string_view, E>> choices) const {
    std::vector<EnumName<E>> names;
    for (const auto& [text, value] : choices) names.push_back({value, text});
    return read_choice(key, out, std::span<const EnumName<E>>(names));
  }
  // The value spelled as the node at `key` in an enum's table (enum_names.h).
  template <typename E>
  Status read_choice(std::string_view key, E& out, std::span<const EnumName<E>> names) const {
    if (!has(key)) return Status::ok();
    const YAML::Node n = get(key);
    std::string expected;
    for (const EnumName<E>& name : names) {
      if (n.IsScalar() && n.Scalar() == name.name) {
        out = name.value;
        return Status::ok();
      }
      expected += (expected.empty() ? "" : " | ") + std::string(name.name);
    }
    return error_got(key, "one of " + expected);
  }

 private:
  MapReader(const YamlSource& source, YAML::Node node, std::string path)
      : source_(&source), node_(std::move(node)), path_(std::move(path)) {}
  const YamlSource* source_;
  YAML::Node node_;
  std::string path_;
};

// Checks a number against a range; returns the "expected ..." text on failure, empty if fine.
std::string range_violation(double value, Range range, bool integer);

// Reads a scalar node as a number in `range`; errors name `field`.
Status read_number_node(const YamlSource& source, const YAML::Node& node, const std::string& field, double& out,
                        Range range);

}  // namespace omnilearn::scenarios::detail
