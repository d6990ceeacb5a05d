// The parsers for each section of a scenario file, called by parse_scenario() in order. Each fills its part
// of the Scenario from a YAML node, or returns an error naming file, line and field. Private to scenarios/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"
#include "yaml_source.h"

namespace omnilearn::scenarios::detail {

struct ParseContext {
  const YamlSource& source;
  std::filesystem::path base_dir;  // the scenario file's folder: relative paths are resolved against it

  // `path` made relative to base_dir (absolute paths are kept), lexically normalised.
  std::string resolve(const std::string& path) const;
};

Status parse_cluster(const ParseContext& ctx, const YAML::Node& node, ClusterSpec& out);
Status parse_workload(const ParseContext& ctx, const YAML::Node& node, WorkloadSpec& out);
// Needs the parsed cluster: `cores` schedules are checked against each worker's nominal cores.
Status parse_availability(const ParseContext& ctx, const YAML::Node& node, const ClusterSpec& cluster,
                          AvailabilitySpec& out);
Status parse_energy(const ParseContext& ctx, const YAML::Node& node, EnergySpec& out);
// Reads a model profile mapping (inline, or the root of a profile file).
Status parse_model_profile(const YamlSource& source, const YAML::Node& node, const std::string& path,
                           ModelProfile& out);

}  // namespace omnilearn::scenarios::detail
