// The resolved Scenario as JSON, for a run folder's manifest.json: every field after defaults, presets,
// units and paths were resolved. Pure function: thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "omnilearn/scenarios/enum_names.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// A JSON object (keys in schema order, numbers in shortest round-trip form, SI units: flop/s, bytes/s, s).
// Deterministic: the same Scenario gives the same bytes. `depth` > 0: the text as it reads nested that many levels
// down a dump indented by 2 (each line after the first indented 2 * depth spaces more), for manifest.json to hold.
std::string scenario_to_json(const Scenario& scenario, int depth = 0);

// The testbed settings as JSON (the scenario's `emulator` object; the testbed's config.json): every field by its
// scenario key, enums by their scenario spelling. Reading fills absent keys with the defaults.
// An enum as its name in its table (enum_names.h); as nlohmann's NLOHMANN_JSON_SERIALIZE_ENUM, a name the table
// lacks reads as the table's first value.
template <typename BasicJsonType, typename E>
void enum_to_json(BasicJsonType& j, E value) {
  j = std::string(enum_name(value));
}
template <typename BasicJsonType, typename E>
void enum_from_json(const BasicJsonType& j, E& value) {
  const auto names = enum_names(value);
  value = names.front().value;
  if (!j.is_string()) return;
  const std::string text = j.template get<std::string>();
  for (const EnumName<E>& n : names) {
    if (text == n.name) value = n.value;
  }
}
// Concrete overloads, so that they win over nlohmann's own (numeric) conversion of enums.
#define OMNILEARN_JSON_ENUM(E)                       \
  template <typename BasicJsonType>                  \
  void to_json(BasicJsonType& j, const E& value) {   \
    enum_to_json(j, value);                          \
  }                                                  \
  template <typename BasicJsonType>                  \
  void from_json(const BasicJsonType& j, E& value) { \
    enum_from_json(j, value);                        \
  }
OMNILEARN_JSON_ENUM(Network)
OMNILEARN_JSON_ENUM(Loss)
OMNILEARN_JSON_ENUM(Device)
OMNILEARN_JSON_ENUM(LrScalingRule)
OMNILEARN_JSON_ENUM(QuotaScope)
OMNILEARN_JSON_ENUM(AspUpdate)
OMNILEARN_JSON_ENUM(AspPull)
OMNILEARN_JSON_ENUM(AspRule)
OMNILEARN_JSON_ENUM(AspEpochs)
OMNILEARN_JSON_ENUM(PartitionKind)
#undef OMNILEARN_JSON_ENUM
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EmulatorSpec, network, device, cpu_budget, cpu_per_core, cpu_period_s,
                                                throttle, cpuset, sample_cost_s, target_accuracy, eval_every,
                                                eval_samples, time_budget_s, learning_rate, momentum, lr_scaling,
                                                lr_scaling_rule,
                                                warmup_updates, stall_timeout_s, stop_grace_s, data_source, cache_dir,
                                                model_file, input_shape, loss, train_data, test_data)

// workload.asp as JSON (the testbed's config.json, the manifest when not the defaults): keys and spellings as the
// scenario file's; delay_threshold `inf` is kNoDelayThreshold. `epochs` is left out, so that the manifest of a run
// with the default count is unchanged: the manifest adds it when ceil, the testbed's config.json carries it as
// TestbedConfig::asp_epochs.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AspSpec, update, pull, rule, staleness_bound, delay_threshold,
                                                dc_lambda)
// workload.partition as JSON (the testbed's config.json; the manifest when not iid), keys as the scenario file's.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PartitionSpec, kind, shards_per_worker)

}  // namespace omnilearn::scenarios
