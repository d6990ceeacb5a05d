// What every LibTorch role of the worker program shares (BSP worker, ASP worker and parameter server,
// calibration): Fashion-MNIST from the decompressed IDX files, the two networks, one forward+backward step and
// evaluation. Including this header costs a LibTorch compile (NOTES.md: ~25 s per translation unit).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"

namespace omnilearn::emulator::worker {

struct Split {
  torch::Tensor images;  // [N, 1, 28, 28] float, normalised
  torch::Tensor labels;  // [N] int64
};

// Reads the first `limit` (0 = all) samples of an IDX image/label pair ("train" or "t10k") in `dir`.
Result<Split> read_split(const std::string& dir, const std::string& prefix, std::int64_t limit);

struct Net {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
};
// A fresh network (weights from torch's current seed).
Net make_net(Network network);
// Multiply-accumulates of one forward pass on one 28x28 image (counted by hand from the layer shapes).
double forward_macs(Network network);

// The compute step every role times: zero the gradients, forward + cross-entropy + backward on `x`/`y`.
struct StepResult {
  double loss = 0.0;
  double accuracy = 0.0;  // on the batch itself
};
StepResult forward_backward(Net& net, const torch::Tensor& x, const torch::Tensor& y);

struct Evaluation {
  double loss = 0.0;
  double accuracy = 0.0;
};
Evaluation evaluate(Net& net, const Split& test);

}  // namespace omnilearn::emulator::worker
