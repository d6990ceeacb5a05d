// What every LibTorch role of the worker program shares (BSP worker, ASP worker and parameter server,
// calibration): Fashion-MNIST from the decompressed IDX files, the two networks, one forward+backward step and
// evaluation. Including this header costs a LibTorch compile (NOTES.md: ~25 s per translation unit).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

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
// Reads the first `limit` (0 = all) samples of a tensor file: what Python's torch.save (or torch::pickle_save)
// writes of a dict {"inputs": [n, *input_shape] float tensor, "labels": [n] integer tensor}. Errors name the file
// and what is wrong with it.
Result<Split> read_tensor_file(const std::string& path, const std::vector<std::int64_t>& input_shape, std::int64_t limit);
// The training ("train") or test ("test") split the settings name: the user's tensor file (train_data, test_data)
// or Fashion-MNIST's IDX files in `fashion_mnist_dir`.
Result<Split> load_split(const scenarios::EmulatorSpec& settings, const std::string& fashion_mnist_dir, bool train,
                         std::int64_t limit);

// A network of any kind: its trainable tensors (in a fixed order, the same in every process), its forward pass,
// and its mode switch (training, or evaluation for batch norm and dropout).
struct Net {
  std::vector<torch::Tensor> parameters;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::function<void(bool)> set_training;
  torch::Device device = torch::kCPU;  // where the module lives; inputs are moved there
  scenarios::Loss loss = scenarios::Loss::kCrossEntropy;
  std::string name;                    // "lenet", "resnet", or "torchscript:<file name>"
};
// A fresh LeNet or ResNet (weights from torch's current seed) on `device`.
Net make_net(Network network, torch::Device device = torch::kCPU);
// The network `settings` name on `device`: LeNet or ResNet as above, or the user's TorchScript module
// (settings.model_file, with its saved weights; an error names the file when it cannot be loaded).
Result<Net> make_net(const scenarios::EmulatorSpec& settings, torch::Device device = torch::kCPU);

// The Torch device for `device`: CUDA device 0 (the one CUDA_VISIBLE_DEVICES / the MPS daemon gives this process),
// or an error saying why CUDA cannot be used (this LibTorch has no CUDA, or no GPU is visible).
Result<torch::Device> torch_device(Device device);
// `omnilearn-emulate-worker --probe-cuda`: prints what CUDA this LibTorch sees; 0 when training on CUDA can work.
int run_cuda_probe();
// Multiply-accumulates of one forward pass on one sample: counted by hand from the layer shapes for LeNet and the
// ResNet (28x28 images); for another network, the number of its parameters (each weight used once per sample, as
// in a dense layer: an estimate, said so in the calibrated profile).
double forward_macs(const Net& net, Network network);

// The compute step every role times: zero the gradients, forward + the network's loss + backward on `x`/`y` (moved to
// the network's device; on CUDA the step ends with a synchronize, so a timer around it measures the GPU work).
// With `cpu_target_s` > 0 (CPU only: emulator.sample_cost_s x batch), the step then runs gradient-free forward
// passes over `x` until this thread's CPU time for the step (the process's, when Torch uses several threads)
// reaches `cpu_target_s`: the step costs that much CPU time on any host, whatever the host's own speed, and
// under a CPU quota of s cores it takes cpu_target_s / s of wall time. The gradients are those of the one real pass.
struct StepResult {
  double loss = 0.0;
  double accuracy = 0.0;     // on the batch itself
  double own_cpu_s = 0.0;    // CPU time of the real forward + backward pass
};
StepResult forward_backward(Net& net, const torch::Tensor& x, const torch::Tensor& y, double cpu_target_s = 0.0);
// Says once on stderr (`warned` remembers it), naming `who`, when the real pass alone cost more CPU time than the
// emulated `cpu_target_s`: on such a host a step costs what its own pass costs, not the scenario's cost.
void note_cost_overrun(const StepResult& step, double cpu_target_s, const std::string& who, bool& warned);

struct Evaluation {
  double loss = 0.0;
  double accuracy = 0.0;
};
Evaluation evaluate(Net& net, const Split& test);

// ASP's learning-rate factor for a push of `ratio` = b_k / b_ref (emulator.lr_scaling): the ratio itself (linear), or
// its square root.
double lr_scale(scenarios::LrScalingRule rule, double ratio);

}  // namespace omnilearn::emulator::worker
