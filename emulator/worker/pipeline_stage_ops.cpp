#include "pipeline_stage_ops.h"

#include <time.h>

#include <string>

namespace omnilearn::emulator::worker {
namespace {

constexpr std::int64_t kDataBatches = 8;  // distinct micro-batches of synthetic data, cycled

// A c10d/Gloo exception as a Status (the adapter boundary).
template <typename F>
Status guarded(const char* what, F&& f) {
  try {
    f();
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::internal(std::string(what) + ": " + e.what());
  }
}

double monotonic_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double thread_cpu_now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

TorchStageOps::TorchStageOps(const PipelineTestbedSpec& spec, std::int64_t stage,
                             c10::intrusive_ptr<c10d::ProcessGroupGloo> pipe)
    : stage_(stage), stages_(spec.stages), batch_(spec.micro_batch_size), first_(stage == 0),
      last_(stage == spec.stages - 1), pipe_(std::move(pipe)) {
  const std::int64_t begin = stage_first_layer(spec, stage);
  const std::int64_t count = spec.layers_per_stage[static_cast<std::size_t>(stage)];
  in_width_ = spec.widths[static_cast<std::size_t>(begin)];
  out_width_ = spec.widths[static_cast<std::size_t>(begin + count)];
  for (std::int64_t l = begin; l < begin + count; ++l) {
    torch::manual_seed(spec.seed * 1000003ULL + static_cast<std::uint64_t>(l));
    const std::int64_t in = spec.widths[static_cast<std::size_t>(l)];
    const std::int64_t out = spec.widths[static_cast<std::size_t>(l + 1)];
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    weights_.push_back((torch::rand({out, in}) * 2 - 1).mul_(bound).requires_grad_(true));
    biases_.push_back((torch::rand({out}) * 2 - 1).mul_(bound).requires_grad_(true));
  }
  torch::manual_seed(spec.seed);
  for (std::int64_t i = 0; i < kDataBatches; ++i) {
    data_.push_back(torch::randn({batch_, spec.widths.front()}));
    labels_.push_back(torch::randint(spec.widths.back(), {batch_}, torch::kLong));
  }
}

torch::Tensor TorchStageOps::run_layers(const torch::Tensor& x) {
  torch::Tensor h = x;
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    h = torch::nn::functional::linear(h, weights_[i], biases_[i]);
    if (!(last_ && i + 1 == weights_.size())) h = torch::relu(h);
  }
  return h;
}

Status TorchStageOps::post_receives(std::int64_t micro_batches) {
  return guarded("posting the step's receives", [&] {
    for (std::int64_t mb = 0; mb < micro_batches; ++mb) {
      for (const bool backward : {false, true}) {
        if (backward ? last_ : first_) continue;
        std::vector<torch::Tensor> buf{torch::empty({batch_, backward ? out_width_ : in_width_})};
        auto work = pipe_->recv(buf, static_cast<int>(backward ? stage_ + 1 : stage_ - 1), tag(mb, backward));
        posted_[tag(mb, backward)] = {buf[0], std::move(work)};
      }
    }
  });
}

Result<torch::Tensor> TorchStageOps::receive(std::int64_t micro_batch, bool backward) {
  const double begin_s = monotonic_s();
  auto it = posted_.find(tag(micro_batch, backward));
  if (it == posted_.end()) {
    std::vector<torch::Tensor> buf{torch::empty({batch_, backward ? out_width_ : in_width_})};
    Status s = guarded("posting a receive", [&] {
      auto work = pipe_->recv(buf, static_cast<int>(backward ? stage_ + 1 : stage_ - 1), tag(micro_batch, backward));
      it = posted_.emplace(tag(micro_batch, backward), PostedReceive{buf[0], std::move(work)}).first;
    });
    OMNI_RETURN_IF_ERROR(s);
  }
  PostedReceive r = std::move(it->second);
  posted_.erase(it);
  OMNI_RETURN_IF_ERROR(guarded(backward ? "receiving a gradient" : "receiving an activation", [&] { r.work->wait(); }));
  record(backward ? "recv_gradient" : "recv_activation", micro_batch, begin_s, monotonic_s(), 0.0);
  return r.buffer;
}

Status TorchStageOps::receive_activation(std::int64_t micro_batch) {
  auto t = receive(micro_batch, /*backward=*/false);
  if (!t) return t.status();
  input_[micro_batch] = t->requires_grad_(true);
  return Status::ok();
}

Status TorchStageOps::forward(std::int64_t micro_batch) {
  const double begin_s = monotonic_s(), cpu0_s = thread_cpu_now_s();
  if (first_) input_[micro_batch] = data_[static_cast<std::size_t>(micro_batch % kDataBatches)];
  const auto in = input_.find(micro_batch);
  if (in == input_.end()) return Status::internal("no input");
  torch::Tensor out = run_layers(in->second);
  if (last_) {
    out = torch::nn::functional::cross_entropy(out, labels_[static_cast<std::size_t>(micro_batch % kDataBatches)]) * loss_scale_;
  }
  output_[micro_batch] = out;
  record("forward", micro_batch, begin_s, monotonic_s(), thread_cpu_now_s() - cpu0_s);
  return Status::ok();
}

Status TorchStageOps::send_activation(std::int64_t micro_batch) {
  in_flight_.push_back(output_.at(micro_batch).detach().contiguous());
  std::vector<torch::Tensor> t{in_flight_.back()};
  const double now_s = monotonic_s();
  record("send_activation", micro_batch, now_s, now_s, 0.0);
  return guarded("sending an activation", [&] { sends_.push_back(pipe_->send(t, static_cast<int>(stage_ + 1), tag(micro_batch, false))); });
}

Status TorchStageOps::receive_gradient(std::int64_t micro_batch) {
  auto t = receive(micro_batch, /*backward=*/true);
  if (!t) return t.status();
  output_grad_[micro_batch] = *t;
  return Status::ok();
}

Status TorchStageOps::backward(std::int64_t micro_batch) {
  const double begin_s = monotonic_s(), cpu0_s = thread_cpu_now_s();
  const auto out = output_.find(micro_batch);
  if (out == output_.end()) return Status::internal("no output");
  if (last_) {
    out->second.backward();
  } else {
    const auto g = output_grad_.find(micro_batch);
    if (g == output_grad_.end()) return Status::internal("no gradient");
    out->second.backward(g->second);
    output_grad_.erase(g);
  }
  output_.erase(out);
  record("backward", micro_batch, begin_s, monotonic_s(), thread_cpu_now_s() - cpu0_s);
  return Status::ok();
}

Status TorchStageOps::send_gradient(std::int64_t micro_batch) {
  const auto in = input_.find(micro_batch);
  if (in == input_.end() || !in->second.grad().defined()) return Status::internal("no input gradient");
  in_flight_.push_back(in->second.grad().contiguous());
  input_.erase(in);
  std::vector<torch::Tensor> t{in_flight_.back()};
  const double now_s = monotonic_s();
  record("send_gradient", micro_batch, now_s, now_s, 0.0);
  return guarded("sending a gradient", [&] { sends_.push_back(pipe_->send(t, static_cast<int>(stage_ - 1), tag(micro_batch, true))); });
}

Status TorchStageOps::finish_sends() {
  Status s = guarded("waiting for the sends", [&] {
    for (auto& w : sends_) w->wait();
  });
  sends_.clear();
  in_flight_.clear();
  if (first_) input_.clear();  // the first stage's inputs need no gradient
  return s;
}

void TorchStageOps::set_input(std::int64_t micro_batch, torch::Tensor input) {
  input_[micro_batch] = input.requires_grad_(true);
}

void TorchStageOps::set_output_gradient(std::int64_t micro_batch, torch::Tensor gradient) {
  output_grad_[micro_batch] = std::move(gradient);
}

torch::Tensor TorchStageOps::sample_input() const { return torch::randn({batch_, in_width_}); }
torch::Tensor TorchStageOps::sample_gradient() const { return torch::randn({batch_, out_width_}) * 1e-3; }

torch::Tensor TorchStageOps::flat_gradients() const {
  std::vector<torch::Tensor> parts;
  for (const auto* group : {&weights_, &biases_}) {
    for (const auto& p : *group) parts.push_back(p.grad().defined() ? p.grad().reshape(-1) : torch::zeros({p.numel()}));
  }
  return torch::cat(parts);
}

void TorchStageOps::set_gradients(const torch::Tensor& flat) {
  std::int64_t at = 0;
  for (auto* group : {&weights_, &biases_}) {
    for (auto& p : *group) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      p.mutable_grad().copy_(flat.narrow(0, at, p.numel()).view_as(p));
      at += p.numel();
    }
  }
}

void TorchStageOps::update(double learning_rate) {
  torch::NoGradGuard ng;
  for (auto* group : {&weights_, &biases_}) {
    for (auto& p : *group) {
      if (!p.grad().defined()) continue;
      p.add_(p.grad(), -learning_rate);
      p.mutable_grad().zero_();
    }
  }
}

}  // namespace omnilearn::emulator::worker
