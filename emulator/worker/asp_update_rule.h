// The numerics of ASP's algorithms (workload.asp; docs/asp-rules.md writes each update in one line), implemented once
// for the testbed's parameter server and workers (asp_worker.cpp) and virtual-time training (torch_numerics.cpp): the
// server's rule for a pushed gradient, the overwrite of the server's parameters by a pushed model, and a worker's
// local SGD step on its own copy. When a push is dropped (Ringmaster) is scenarios::AspSpec::applies; when a reply
// waits (SSP, the epoch barrier) is run::AspSchedule. Including this header costs a LibTorch compile. Not
// thread-safe: one owner.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "omnilearn/base/units.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator::worker {

// What the server knows of one pushed gradient.
struct AspPush {
  WorkerId worker = 0;
  BatchSize batch = 0;
  std::int64_t staleness = 0;  // τ: updates the server applied since this worker last pulled
  double compute_s = 0.0;      // t_k: the worker's compute time for this push
};

// The server's rule (workload.asp.rule) for a pushed gradient.
class AspServerRule {
 public:
  virtual ~AspServerRule() = default;
  // Worker k has just pulled the server's parameters `params` (DC-ASGD keeps a copy).
  virtual void pulled(WorkerId k, const std::vector<torch::Tensor>& params);
  // Turns the pushed gradient, held in `params`' .grad(), into the step to take: rewrites the gradients where the
  // rule does (DC-ASGD) and returns the factor of the step size; 0 when the rule drops the push (Ringmaster).
  virtual double prepare(const AspPush& push, std::vector<torch::Tensor>& params) = 0;
};

// The rule `spec` names, for `workers` workers (asgd, ssp: plain steps; SSP's waiting is run::AspSchedule's). `b_ref`
// (B / n, > 0) is the batch the step size is set for: staleness-bounded scales each step by b_k / b_ref.
std::unique_ptr<AspServerRule> make_asp_server_rule(const scenarios::AspSpec& spec, std::size_t workers, double b_ref);

// staleness-bounded's factor of the step size: (b_k / b_ref) min(1, R / τ) (docs/asp-rules.md); never 0.
double staleness_bounded_factor(BatchSize batch, double b_ref, std::int64_t staleness, std::int64_t bound);

// Applies a pushed gradient, already in `params`' .grad(), to the server's `params`: the rule, then one step of `sgd`
// (its momentum as configured) at step size `lr` x the rule's factor. Returns false, leaving `params` and `sgd`
// unchanged, when the rule drops the push.
bool apply_gradient(AspServerRule& rule, torch::optim::SGD& sgd, std::vector<torch::Tensor>& params,
                    const AspPush& push, double lr);

// The step size of an ASP update (the server's for a gradient, a worker's for its local step): emulator.learning_rate,
// times lr_scale(b_k / b_ref) with emulator.lr_scaling, times the warm-up ramp at the `update`-th update (1-based).
double asp_step_size(const scenarios::EmulatorSpec& settings, BatchSize batch, double b_ref, std::int64_t update);

// update: model-overwrite: the server's parameters become the pushed flat vector (the last writer wins).
void overwrite_parameters(std::vector<torch::Tensor>& params, const torch::Tensor& flat);

// A worker's SGD step on its own flat parameters (update: model-overwrite, or pull: per-epoch), with the momentum of
// torch::optim::SGD (no dampening): buf = g at the first step, then buf = momentum x buf + g; w -= lr x buf. The
// momentum buffer is the worker's and survives its pulls.
class LocalSgd {
 public:
  explicit LocalSgd(double momentum) : momentum_(momentum) {}
  // `w` and `g` are flat float tensors of the same length.
  void step(torch::Tensor& w, const torch::Tensor& g, double lr);
  std::int64_t steps() const { return steps_; }

 private:
  double momentum_;
  torch::Tensor buf_;
  std::int64_t steps_ = 0;
};

}  // namespace omnilearn::emulator::worker
