// How an enum is spelled in a scenario: one table per enum, {value, name} in declaration order, which the scenario
// parser reads (map_reader.h: read_choice) and the JSON (scenario_json.h: the scenario in manifest.json, the
// testbed's config.json) writes and reads alike. Here: the testbed settings' enums (EmulatorSpec) and ASP's
// algorithm (AspSpec) and its data partition (PartitionSpec). Constants and pure functions: thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

inline constexpr EnumName<Network> kNetworkNames[] = {{Network::kFromModel, ""},
                                                      {Network::kLeNet, "lenet"},
                                                      {Network::kResNet, "resnet"},
                                                      {Network::kTorchScript, "torchscript"}};
inline constexpr EnumName<Loss> kLossNames[] = {{Loss::kCrossEntropy, "cross-entropy"}, {Loss::kNll, "nll"}};
inline constexpr EnumName<Device> kDeviceNames[] = {{Device::kCpu, "cpu"}, {Device::kCuda, "cuda"}};
inline constexpr EnumName<LrScalingRule> kLrScalingRuleNames[] = {{LrScalingRule::kLinear, "linear"},
                                                                  {LrScalingRule::kSqrt, "sqrt"}};
inline constexpr EnumName<QuotaScope> kQuotaScopeNames[] = {{QuotaScope::kCompute, "compute"},
                                                            {QuotaScope::kProcess, "process"}};
inline constexpr EnumName<AspUpdate> kAspUpdateNames[] = {{AspUpdate::kGradient, "gradient"},
                                                          {AspUpdate::kModelOverwrite, "model-overwrite"}};
inline constexpr EnumName<AspPull> kAspPullNames[] = {{AspPull::kEveryPush, "every-push"},
                                                      {AspPull::kPerEpoch, "per-epoch"}};
inline constexpr EnumName<AspEpochs> kAspEpochsNames[] = {{AspEpochs::kFloor, "floor"}, {AspEpochs::kCeil, "ceil"}};
inline constexpr EnumName<AspRule> kAspRuleNames[] = {{AspRule::kAsgd, "asgd"},
                                                      {AspRule::kStalenessAware, "staleness-aware"},
                                                      {AspRule::kDcAsgd, "dc-asgd"},
                                                      {AspRule::kSsp, "ssp"},
                                                      {AspRule::kRingmaster, "ringmaster"},
                                                      {AspRule::kRescaled, "rescaled"},
                                                      {AspRule::kStalenessBounded, "staleness-bounded"}};
inline constexpr EnumName<PartitionKind> kPartitionKindNames[] = {{PartitionKind::kIid, "iid"},
                                                                  {PartitionKind::kSortedShards, "sorted-shards"}};

// The table of an enum, found by its type (the argument's value is not used).
constexpr std::span<const EnumName<Network>> enum_names(Network) { return kNetworkNames; }
constexpr std::span<const EnumName<Loss>> enum_names(Loss) { return kLossNames; }
constexpr std::span<const EnumName<Device>> enum_names(Device) { return kDeviceNames; }
constexpr std::span<const EnumName<LrScalingRule>> enum_names(LrScalingRule) { return kLrScalingRuleNames; }
constexpr std::span<const EnumName<QuotaScope>> enum_names(QuotaScope) { return kQuotaScopeNames; }
constexpr std::span<const EnumName<AspUpdate>> enum_names(AspUpdate) { return kAspUpdateNames; }
constexpr std::span<const EnumName<AspPull>> enum_names(AspPull) { return kAspPullNames; }
constexpr std::span<const EnumName<AspEpochs>> enum_names(AspEpochs) { return kAspEpochsNames; }
constexpr std::span<const EnumName<AspRule>> enum_names(AspRule) { return kAspRuleNames; }
constexpr std::span<const EnumName<PartitionKind>> enum_names(PartitionKind) { return kPartitionKindNames; }

// How `value` is spelled ("?" for a value the table lacks, which a complete table never does).
template <typename E>
constexpr std::string_view enum_name(E value) {
  for (const EnumName<E>& n : enum_names(value)) {
    if (n.value == value) return n.name;
  }
  return "?";
}

// The value spelled `name`, or nothing.
template <typename E>
constexpr std::optional<E> enum_from_name(std::string_view name) {
  for (const EnumName<E>& n : enum_names(E{})) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

}  // namespace omnilearn::scenarios
