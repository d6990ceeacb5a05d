#include "omnilearn/scenarios/model_catalog.h"

#include <array>

namespace omnilearn::scenarios {
namespace {

struct ModelRow {
  const char* name;
  double parameters;
  double forward_small;  // forward FLOPs per sample at 32 px
  double forward_large;  // forward FLOPs per sample at 224 px
};

// Forward FLOPs per sample (multiply-adds counted as 2). GPT-2 small: 2 x parameters x 1024 tokens per sample,
// whatever the dataset.
constexpr std::array<ModelRow, 5> kModels{{
    {"resnet18", 11.7e6, 0.56e9, 1.82e9},
    {"resnet50", 25.6e6, 1.30e9, 4.1e9},
    {"vgg11", 132.9e6, 0.275e9, 7.6e9},
    {"alexnet", 61.1e6, 0.04e9, 0.71e9},
    {"gpt2", 124.0e6, 2.0 * 124.0e6 * 1024.0, 2.0 * 124.0e6 * 1024.0},
}};

struct DatasetRow {
  const char* name;
  std::int64_t samples;
  bool small_images;
};

constexpr std::array<DatasetRow, 5> kDatasets{{
    {"cifar10", 50000, true},
    {"fashion-mnist", 60000, true},
    {"food101", 75750, false},
    {"caltech256", 30000, false},
    {"places365", 1800000, false},
}};

}  // namespace

std::optional<DatasetInfo> find_dataset(std::string_view name) {
  for (const auto& row : kDatasets) {
    if (name == row.name) return DatasetInfo{row.name, row.samples, row.small_images};
  }
  return std::nullopt;
}

std::vector<std::string> dataset_names() {
  std::vector<std::string> out;
  for (const auto& row : kDatasets) out.emplace_back(row.name);
  return out;
}

std::optional<ModelProfile> find_model(std::string_view model, bool small_images) {
  for (const auto& row : kModels) {
    if (model != row.name) continue;
    ModelProfile p;
    p.name = row.name;
    p.parameters = row.parameters;
    p.gradient_bytes = 4.0 * row.parameters;
    p.flops_per_sample = 3.0 * (small_images ? row.forward_small : row.forward_large);
    p.flops_per_iteration = 10.0 * row.parameters;
    return p;
  }
  return std::nullopt;
}

std::vector<std::string> model_names() {
  std::vector<std::string> out;
  for (const auto& row : kModels) out.emplace_back(row.name);
  return out;
}

}  // namespace omnilearn::scenarios
