// The built-in model profiles and datasets that scenario files name ("resnet18", "cifar10"). Constant tables:
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

struct DatasetInfo {
  std::string name;
  std::int64_t samples = 0;   // training samples per epoch
  bool small_images = false;  // 28-32 px (CIFAR, Fashion-MNIST); else ImageNet-sized (224 px)
};

// The dataset called `name` (cifar10, fashion-mnist, food101, caltech256, places365), or nullopt.
std::optional<DatasetInfo> find_dataset(std::string_view name);
std::vector<std::string> dataset_names();

// The built-in profile for `model` (resnet18, resnet50, vgg11, alexnet, gpt2) at the dataset's input size:
// flops_per_sample = 3 x forward FLOPs, gradient_bytes = 4 x parameters, flops_per_iteration = optimizer step
// (10 flop per parameter). Nullopt for an unknown name.
std::optional<ModelProfile> find_model(std::string_view model, bool small_images);
std::vector<std::string> model_names();

}  // namespace omnilearn::scenarios
