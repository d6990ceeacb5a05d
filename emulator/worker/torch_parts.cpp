#include "torch_parts.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include <torch/cuda.h>
#include <torch/script.h>

namespace omnilearn::emulator::worker {
namespace {

// ---------------------------------------------------------------- data
Result<std::vector<unsigned char>> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found("cannot open " + path + " (the launcher decompresses Fashion-MNIST there)");
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

// The first line of a (LibTorch) exception message, whose later lines are a C++ stack.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

torch::Tensor loss_of(const Net& net, const torch::Tensor& out, const torch::Tensor& y, bool sum) {
  const std::int64_t reduction = sum ? at::Reduction::Sum : at::Reduction::Mean;
  if (net.loss == scenarios::Loss::kNll) return torch::nll_loss(out, y, {}, reduction);
  return torch::cross_entropy_loss(out, y, {}, reduction);
}

std::uint32_t be32(const std::vector<unsigned char>& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// ---------------------------------------------------------------- models
struct LeNetImpl : torch::nn::Module {
  LeNetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5).padding(2)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)))),
        fc1(register_module("fc1", torch::nn::Linear(400, 48))),
        fc2(register_module("fc2", torch::nn::Linear(48, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = torch::relu(fc1->forward(x.flatten(1)));
    return fc2->forward(x);
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(LeNet);

struct BlockImpl : torch::nn::Module {
  BlockImpl(int in, int out, int stride)
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut = register_module("shortcut", torch::nn::Sequential(
          torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)), torch::nn::BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::relu(bn1->forward(conv1->forward(x)));
    y = bn2->forward(conv2->forward(y));
    return torch::relu(y + (shortcut.is_empty() ? x : shortcut->forward(x)));
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(Block);

struct ResNetImpl : torch::nn::Module {
  ResNetImpl()
      : stem(register_module("stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1).bias(false)))),
        bn(register_module("bn", torch::nn::BatchNorm2d(16))),
        b1(register_module("b1", Block(16, 16, 1))),
        b2(register_module("b2", Block(16, 32, 2))),
        b3(register_module("b3", Block(32, 64, 2))),
        fc(register_module("fc", torch::nn::Linear(64, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn->forward(stem->forward(x)));
    x = b3->forward(b2->forward(b1->forward(x)));
    return fc->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
  torch::nn::Conv2d stem;
  torch::nn::BatchNorm2d bn;
  Block b1, b2, b3;
  torch::nn::Linear fc;
};
TORCH_MODULE(ResNet);

}  // namespace

// Reads the first `limit` (0 = all) samples of an IDX image/label pair ("train" or "t10k").
Result<Split> read_split(const std::string& dir, const std::string& prefix, std::int64_t limit) {
  auto images = read_file(dir + "/" + prefix + "-images-idx3-ubyte");
  if (!images) return images.status();
  auto labels = read_file(dir + "/" + prefix + "-labels-idx1-ubyte");
  if (!labels) return labels.status();
  if (images->size() < 16 || be32(*images, 0) != 0x803 || labels->size() < 8 || be32(*labels, 0) != 0x801) {
    return Status::parse_error(dir + "/" + prefix + ": not an IDX image/label pair");
  }
  std::int64_t n = be32(*images, 4);
  const std::int64_t rows = be32(*images, 8), cols = be32(*images, 12);
  if (be32(*labels, 4) != n || images->size() < 16 + static_cast<std::size_t>(n * rows * cols) ||
      labels->size() < 8 + static_cast<std::size_t>(n)) {
    return Status::parse_error(dir + "/" + prefix + ": truncated IDX files");
  }
  if (limit > 0) n = std::min(n, limit);
  Split s;
  s.images = torch::from_blob(images->data() + 16, {n, 1, rows, cols}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div_(255.0)
                 .sub_(0.2860)
                 .div_(0.3530);
  s.labels = torch::from_blob(labels->data() + 8, {n}, torch::kUInt8).to(torch::kInt64);
  return s;
}

Net make_net(Network network, torch::Device device) {
  Net net;
  net.device = device;
  if (network == Network::kResNet) {
    ResNet r;
    r->to(device);
    net.forward = [r](const torch::Tensor& x) mutable { return r->forward(x); };
    net.set_training = [r](bool on) mutable { r->train(on); };
    net.parameters = r->parameters();
    net.name = "resnet";
  } else {
    LeNet l;
    l->to(device);
    net.forward = [l](const torch::Tensor& x) mutable { return l->forward(x); };
    net.set_training = [l](bool on) mutable { l->train(on); };
    net.parameters = l->parameters();
    net.name = "lenet";
  }
  return net;
}

Result<Net> make_net(const scenarios::EmulatorSpec& settings, torch::Device device) {
  if (settings.network != Network::kTorchScript) {
    Net net = make_net(settings.network, device);
    net.loss = settings.loss;
    return net;
  }
  std::shared_ptr<torch::jit::Module> module;
  try {
    module = std::make_shared<torch::jit::Module>(torch::jit::load(settings.model_file, device));
  } catch (const std::exception& e) {
    return Status::invalid_argument("emulator.model_file: " + settings.model_file + " is not a TorchScript module "
                                    "(torch.jit.script(model).save(path)): " + first_line(e.what()));
  }
  Net net;
  net.device = device;
  net.loss = settings.loss;
  net.name = "torchscript:" + std::filesystem::path(settings.model_file).filename().string();
  for (const torch::Tensor& p : module->parameters()) net.parameters.push_back(p.requires_grad_(true));
  if (net.parameters.empty()) return Status::invalid_argument("emulator.model_file: " + settings.model_file + " has no parameters to train");
  net.forward = [module](const torch::Tensor& x) { return module->forward({x}).toTensor(); };
  net.set_training = [module](bool on) { module->train(on); };
  return net;
}

Result<Split> read_tensor_file(const std::string& path, const std::vector<std::int64_t>& input_shape, std::int64_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::not_found(path + ": cannot read the tensor file");
  const std::vector<char> bytes(std::istreambuf_iterator<char>(in), {});
  torch::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    return Status::parse_error(path + ": not a torch.save file: " + first_line(e.what()));
  }
  if (!value.isGenericDict()) return Status::parse_error(path + ": expected a dict with \"inputs\" and \"labels\"");
  const auto dict = value.toGenericDict();
  if (!dict.contains("inputs") || !dict.contains("labels") || !dict.at("inputs").isTensor() || !dict.at("labels").isTensor()) {
    return Status::parse_error(path + ": expected tensors under \"inputs\" and \"labels\"");
  }
  torch::Tensor inputs = dict.at("inputs").toTensor();
  torch::Tensor labels = dict.at("labels").toTensor();
  std::int64_t per_sample = 1;
  for (const std::int64_t d : input_shape) per_sample *= d;
  const std::int64_t n = inputs.dim() > 0 ? inputs.size(0) : 0;
  if (n < 1 || inputs.numel() != n * per_sample) {
    return Status::parse_error(path + ": \"inputs\" of shape " + shape_text(inputs.sizes().vec()) + " is not [n, " +
                               shape_text(input_shape).substr(1) + " (emulator.input_shape)");
  }
  if (labels.dim() != 1 || labels.size(0) != n || labels.is_floating_point()) {
    return Status::parse_error(path + ": \"labels\" must be n = " + std::to_string(n) + " integer class labels");
  }
  const std::int64_t keep = limit > 0 ? std::min(n, limit) : n;
  std::vector<std::int64_t> shape{keep};
  shape.insert(shape.end(), input_shape.begin(), input_shape.end());
  Split split;
  split.images = inputs.narrow(0, 0, keep).to(torch::kFloat32).reshape(shape).contiguous();
  split.labels = labels.narrow(0, 0, keep).to(torch::kInt64).contiguous();
  return split;
}

Result<Split> load_split(const scenarios::EmulatorSpec& settings, const std::string& fashion_mnist_dir, bool train,
                         std::int64_t limit) {
  const std::string& file = train ? settings.train_data : settings.test_data;
  if (!file.empty()) return read_tensor_file(file, settings.input_shape, limit);
  return read_split(fashion_mnist_dir, train ? "train" : "t10k", limit);
}

Result<torch::Device> torch_device(Device device) {
  if (device == Device::kCpu) return torch::Device(torch::kCPU);
  if (!torch::cuda::is_available()) {
    return Status::invalid_argument(
        "--device cuda: this LibTorch sees no CUDA device (torch::cuda::is_available() is false): either it is a "
        "CPU-only build (Debian's libtorch-dev is; configure with -DTorch_DIR=<CUDA LibTorch>/share/cmake/Torch) or "
        "no GPU is visible to the worker");
  }
  return torch::Device(torch::kCUDA, 0);
}

int run_cuda_probe() {
  const bool available = torch::cuda::is_available();
  std::cout << "cuda_available=" << (available ? 1 : 0) << " devices=" << (available ? torch::cuda::device_count() : 0)
            << "\n";
  if (!available) {
    std::cout << torch_device(Device::kCuda).status().message() << "\n";
    return 3;
  }
  return 0;
}

Evaluation evaluate(Net& net, const Split& test) {
  torch::NoGradGuard no_grad;
  net.set_training(false);
  double loss = 0.0;
  std::int64_t correct = 0;
  const std::int64_t n = test.images.size(0);
  for (std::int64_t i = 0; i < n; i += 500) {
    const std::int64_t len = std::min<std::int64_t>(500, n - i);
    auto logits = net.forward(test.images.narrow(0, i, len).to(net.device));
    auto y = test.labels.narrow(0, i, len).to(net.device);
    loss += loss_of(net, logits, y, /*sum=*/true).item<double>();
    correct += logits.argmax(1).eq(y).sum().item<std::int64_t>();
  }
  net.set_training(true);
  return {loss / static_cast<double>(n), static_cast<double>(correct) / static_cast<double>(n)};
}

double forward_macs(const Net& net, Network network) {
  if (network == Network::kTorchScript) {
    double n = 0.0;
    for (const auto& p : net.parameters) n += static_cast<double>(p.numel());
    return n;
  }
  if (network == Network::kResNet) {
    // stem 16x28x28x9; b1 2 x 16x28x28x144; b2 32x14x14x(144 + 288) + shortcut 32x14x14x16;
    // b3 64x7x7x(288 + 576) + shortcut 64x7x7x32; fc 64x10.
    return 112896.0 + 2 * 1806336.0 + 903168.0 + 1806336.0 + 100352.0 + 903168.0 + 1806336.0 + 100352.0 + 640.0;
  }
  // conv1 6x28x28x25; conv2 16x10x10x150; fc1 400x48; fc2 48x10.
  return 117600.0 + 240000.0 + 19200.0 + 480.0;
}

namespace {
// CPU seconds used so far by this thread, or by the whole process when Torch computes on several threads.
double cpu_now_s() {
  timespec ts{};
  clock_gettime(at::get_num_threads() > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

StepResult forward_backward(Net& net, const torch::Tensor& x, const torch::Tensor& y, double cpu_target_s) {
  const double cpu0 = cpu_now_s();
  for (auto& p : net.parameters) {
    if (p.grad().defined()) p.mutable_grad().zero_();
  }
  const torch::Tensor xd = x.to(net.device);
  const torch::Tensor yd = y.to(net.device);
  auto logits = net.forward(xd);
  auto loss = loss_of(net, logits, yd, /*sum=*/false);
  loss.backward();
  if (net.device.is_cuda()) torch::cuda::synchronize();
  StepResult r{loss.item<double>(), logits.argmax(1).eq(yd).to(torch::kFloat32).mean().item<double>(), 0.0};
  r.own_cpu_s = cpu_now_s() - cpu0;
  if (cpu_target_s > 0.0 && !net.device.is_cuda() && xd.size(0) > 0) {
    // Chunks of up to 8 samples keep the overshoot past the target to a fraction of a millisecond. Batch norm
    // (the ResNet) runs in eval mode here, so its running statistics see only the real pass.
    torch::NoGradGuard no_grad;
    net.set_training(false);
    const std::int64_t n = xd.size(0), chunk = std::min<std::int64_t>(8, n);
    for (std::int64_t at = 0; cpu_now_s() - cpu0 < cpu_target_s; at = (at + chunk) % (n - chunk + 1)) {
      (void)net.forward(xd.narrow(0, at, chunk));
    }
    net.set_training(true);
  }
  return r;
}

double lr_scale(scenarios::LrScalingRule rule, double ratio) {
  return rule == scenarios::LrScalingRule::kSqrt ? std::sqrt(ratio) : ratio;
}

void note_cost_overrun(const StepResult& step, double cpu_target_s, const std::string& who, bool& warned) {
  if (warned || cpu_target_s <= 0.0 || step.own_cpu_s <= cpu_target_s) return;
  std::cerr << who << ": the real pass took " << step.own_cpu_s * 1e3 << " ms of CPU, more than the emulated cost ("
            << cpu_target_s * 1e3 << " ms, emulator.sample_cost_s x batch): steps cost what this host's pass costs\n";
  warned = true;
}

}  // namespace omnilearn::emulator::worker
