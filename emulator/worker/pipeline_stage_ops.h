// One pipeline stage's piece of the MLP and its links to the neighbouring stages (LibTorch, Gloo): the StageOps of
// the `--pipeline-stage` role (pipeline_stage.cpp). Activations and gradients go by ProcessGroupGloo send/recv in
// the replica's group (rank = stage); a send does not wait, finish_sends() waits for the step's sends. Not
// thread-safe: the stage's main thread only.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <vector>

#include "omnilearn/emulator/pipeline_stage_loop.h"
#include "omnilearn/emulator/pipeline_testbed.h"

namespace omnilearn::emulator::worker {

class TorchStageOps final : public StageOps {
 public:
  // Stage `stage`'s layers of `spec`'s MLP, each layer's weights seeded by the spec's seed and the layer's index (so
  // every replica starts alike). `pipe`: the replica's group; null for calibration only.
  TorchStageOps(const PipelineTestbedSpec& spec, std::int64_t stage, c10::intrusive_ptr<c10d::ProcessGroupGloo> pipe);

  Status post_receives(std::int64_t micro_batches) override;
  Status receive_activation(std::int64_t micro_batch) override;
  Status forward(std::int64_t micro_batch) override;
  Status send_activation(std::int64_t micro_batch) override;
  Status receive_gradient(std::int64_t micro_batch) override;
  Status backward(std::int64_t micro_batch) override;
  Status send_gradient(std::int64_t micro_batch) override;
  Status finish_sends() override;

  // Calibration: the input (a stage after the first) or the output's gradient (a stage before the last) of a
  // micro-batch as if received.
  void set_input(std::int64_t micro_batch, torch::Tensor input);
  void set_output_gradient(std::int64_t micro_batch, torch::Tensor gradient);
  torch::Tensor sample_input() const;     // a random tensor of this stage's input shape
  torch::Tensor sample_gradient() const;  // of its output shape

  // The gradients as one flat tensor (for the replicas' all-reduce), and back.
  torch::Tensor flat_gradients() const;
  void set_gradients(const torch::Tensor& flat);
  // SGD on the accumulated gradients, then zeroes them.
  void update(double learning_rate);
  // The scale of each micro-batch's loss: 1 / micro-batches of the step over all replicas (a mean gradient).
  void set_loss_scale(double scale) { loss_scale_ = scale; }

  // What the stage did in the steps, on CLOCK_MONOTONIC (one clock for all the host's processes): each pass with its
  // thread CPU time, each receive from its call to its return, each send at its post (begin = end). The run folder's
  // timeline.csv (pipeline_testbed.h) holds every stage's.
  struct TimelineEvent {
    std::int64_t step = 0;
    const char* what = "";  // forward, backward, recv_activation, recv_gradient, send_activation, send_gradient
    std::int64_t micro_batch = 0;
    double begin_s = 0.0;
    double end_s = 0.0;
    double cpu_s = 0.0;  // passes only
  };
  void set_step(std::int64_t step) { step_ = step; }  // negative (the calibration's): nothing is recorded
  const std::vector<TimelineEvent>& timeline() const { return timeline_; }

 private:
  int tag(std::int64_t micro_batch, bool backward) const { return static_cast<int>(micro_batch * 2 + (backward ? 1 : 0)); }
  torch::Tensor run_layers(const torch::Tensor& x);
  void record(const char* what, std::int64_t micro_batch, double begin_s, double end_s, double cpu_s) {
    if (step_ >= 0) timeline_.push_back({step_, what, micro_batch, begin_s, end_s, cpu_s});
  }
  // The posted receive of (micro_batch, backward), posting it first if post_receives() did not; waits for it.
  Result<torch::Tensor> receive(std::int64_t micro_batch, bool backward);

  struct PostedReceive {
    torch::Tensor buffer;
    c10::intrusive_ptr<c10d::Work> work;
  };

  std::int64_t stage_, stages_, batch_, in_width_, out_width_;
  bool first_, last_;
  std::vector<torch::Tensor> weights_, biases_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pipe_;
  std::vector<torch::Tensor> data_, labels_;  // the first stage's inputs and the last stage's labels, cycled
  std::map<std::int64_t, torch::Tensor> input_, output_, output_grad_;
  std::vector<torch::Tensor> in_flight_;      // tensors of sends not yet waited for
  std::vector<c10::intrusive_ptr<c10d::Work>> sends_;
  std::map<int, PostedReceive> posted_;      // by tag, until received
  double loss_scale_ = 1.0;
  std::int64_t step_ = -1;
  std::vector<TimelineEvent> timeline_;
};

}  // namespace omnilearn::emulator::worker
