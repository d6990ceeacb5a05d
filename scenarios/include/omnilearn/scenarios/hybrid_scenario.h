// HybridScenario: a `kind: hybrid` file (docs/hybrid.md): a pipeline/tensor/data-parallel job on a cluster of GPU
// kinds and nodes, its control, the speed episodes and availability trace it meets, and how long it runs. Parsed
// into hybrid::HybridRunSpec, with every error naming the file, line and field. Plain values: thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/hybrid/hybrid_run.h"

namespace omnilearn::scenarios {

struct HybridScenario {
  std::string name;
  std::string source_path;
  std::string text;  // the file as read (overrides not applied), for the run's summary
  // Accepted as every scenario's is (`--seed`), recorded in the summary; the hybrid model draws nothing at random.
  std::uint64_t seed = 1;
  // The model: Sailor's measured profile of `profile` (traces/devices/sailor-layers.csv), or the transformer
  // shorthand when `transformer` is set.
  std::string profile;
  bool has_transformer = false;
  hybrid::TransformerShape transformer;
  hybrid::HybridRunSpec spec;
  std::vector<hybrid::HybridPolicy> policies;  // control.policy, or each of control.policies
};

// Reads a `kind: hybrid` file; `overrides` as load_scenario's (`path.to.key=value`).
Result<HybridScenario> load_hybrid_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
Result<HybridScenario> parse_hybrid_scenario(std::string_view yaml_text, const std::string& source_name,
                                             const std::vector<std::string>& overrides = {});

}  // namespace omnilearn::scenarios
