// The resolved Scenario as JSON, for a run folder's manifest.json: every field after defaults, presets,
// units and paths were resolved. Pure function: thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// A JSON object (keys in schema order, numbers in shortest round-trip form, SI units: flop/s, bytes/s, s).
// Deterministic: the same Scenario gives the same bytes.
std::string scenario_to_json(const Scenario& scenario);

// The testbed settings as JSON (the scenario's `emulator` object; the testbed's config.json): every field by its
// scenario key, enums by their scenario spelling. Reading fills absent keys with the defaults.
NLOHMANN_JSON_SERIALIZE_ENUM(Network, {{Network::kFromModel, ""}, {Network::kLeNet, "lenet"}, {Network::kResNet, "resnet"},
                                       {Network::kTorchScript, "torchscript"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Loss, {{Loss::kCrossEntropy, "cross-entropy"}, {Loss::kNll, "nll"}})
NLOHMANN_JSON_SERIALIZE_ENUM(Device, {{Device::kCpu, "cpu"}, {Device::kCuda, "cuda"}})
NLOHMANN_JSON_SERIALIZE_ENUM(LrScalingRule, {{LrScalingRule::kLinear, "linear"}, {LrScalingRule::kSqrt, "sqrt"}})
NLOHMANN_JSON_SERIALIZE_ENUM(QuotaScope, {{QuotaScope::kCompute, "compute"}, {QuotaScope::kProcess, "process"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EmulatorSpec, network, device, cpu_budget, cpu_per_core, cpu_period_s,
                                                throttle, cpuset, sample_cost_s, target_accuracy, eval_every,
                                                eval_samples, time_budget_s, learning_rate, momentum, lr_scaling,
                                                lr_scaling_rule,
                                                warmup_updates, stall_timeout_s, stop_grace_s, data_source, cache_dir,
                                                model_file, input_shape, loss, train_data, test_data)

// workload.asp as JSON (the testbed's config.json, the manifest when not the defaults): keys and spellings as the
// scenario file's; delay_threshold `inf` is kNoDelayThreshold.
NLOHMANN_JSON_SERIALIZE_ENUM(AspUpdate, {{AspUpdate::kGradient, "gradient"}, {AspUpdate::kModelOverwrite, "model-overwrite"}})
NLOHMANN_JSON_SERIALIZE_ENUM(AspPull, {{AspPull::kEveryPush, "every-push"}, {AspPull::kPerEpoch, "per-epoch"}})
NLOHMANN_JSON_SERIALIZE_ENUM(AspRule, {{AspRule::kAsgd, "asgd"}, {AspRule::kStalenessAware, "staleness-aware"},
                                       {AspRule::kDcAsgd, "dc-asgd"}, {AspRule::kSsp, "ssp"},
                                       {AspRule::kRingmaster, "ringmaster"}, {AspRule::kRescaled, "rescaled"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AspSpec, update, pull, rule, staleness_bound, delay_threshold, dc_lambda)

}  // namespace omnilearn::scenarios
