// Makes a user's model and data the way a PyTorch user would bring them, for the tests of `emulator.model_file`,
// `emulator.train_data` and `emulator.test_data`: a TorchScript module (a two-layer perceptron over [1, 8, 8]
// inputs, 4 classes) and two tensor files (torch.save format: a dict of "inputs" and "labels") whose labels a linear
// map of the inputs decides, so the task is learnable. Usage: emulator_make_user_model DIR [SEED]
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include <torch/script.h>
#include <torch/torch.h>

namespace {

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_split(const std::string& path, std::int64_t n, const torch::Tensor& projection) {
  const torch::Tensor x = torch::randn({n, 1, 8, 8});
  const torch::Tensor y = torch::matmul(x.flatten(1), projection).argmax(1);
  c10::Dict<std::string, torch::Tensor> d;
  d.insert("inputs", x);
  d.insert("labels", y);
  write_bytes(path, torch::pickle_save(c10::IValue(d)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: emulator_make_user_model DIR [SEED]\n";
    return 2;
  }
  const std::string dir = argv[1];
  torch::manual_seed(argc > 2 ? std::atoll(argv[2]) : 1);
  torch::jit::Module m("UserNet");
  m.register_parameter("w1", torch::randn({64, 32}) * 0.125, false);
  m.register_parameter("b1", torch::zeros({32}), false);
  m.register_parameter("w2", torch::randn({32, 4}) * 0.175, false);
  m.register_parameter("b2", torch::zeros({4}), false);
  m.define(R"(
def forward(self, x):
    h = torch.relu(torch.matmul(x.flatten(1), self.w1) + self.b1)
    return torch.matmul(h, self.w2) + self.b2
)");
  m.save(dir + "/model.pt");
  const torch::Tensor projection = torch::randn({64, 4});
  write_split(dir + "/train.pt", 2048, projection);
  write_split(dir + "/test.pt", 512, projection);
  return 0;
}
