#include "asp_update_rule.h"

#include <algorithm>
#include <optional>

#include "omnilearn/base/check.h"
#include "torch_parts.h"

namespace omnilearn::emulator::worker {
namespace {

using scenarios::AspRule;

// asgd and ssp: the gradient as pushed, at the full step.
class PlainRule final : public AspServerRule {
 public:
  double prepare(const AspPush&, std::vector<torch::Tensor>&) override { return 1.0; }
};

// Zhang et al. 2016: η / max(1, τ).
class StalenessAwareRule final : public AspServerRule {
 public:
  double prepare(const AspPush& push, std::vector<torch::Tensor>&) override {
    return 1.0 / static_cast<double>(std::max<std::int64_t>(1, push.staleness));
  }
};

// Zheng et al. 2017: g + λ g ⊙ g ⊙ (w - w_k), w_k the parameters worker k pulled.
class DcAsgdRule final : public AspServerRule {
 public:
  DcAsgdRule(double lambda, std::size_t workers) : lambda_(lambda), pulled_(workers) {}
  void pulled(WorkerId k, const std::vector<torch::Tensor>& params) override {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor>& copy = pulled_[k];
    if (copy.size() != params.size()) {
      copy.clear();
      for (const auto& p : params) copy.push_back(p.detach().clone());
      return;
    }
    for (std::size_t i = 0; i < params.size(); ++i) copy[i].copy_(params[i].detach());
  }
  double prepare(const AspPush& push, std::vector<torch::Tensor>& params) override {
    torch::NoGradGuard ng;
    const std::vector<torch::Tensor>& w_k = pulled_[push.worker];
    if (w_k.size() != params.size()) return 1.0;  // never pulled: nothing to compensate
    for (std::size_t i = 0; i < params.size(); ++i) {
      torch::Tensor g = params[i].mutable_grad();
      if (!g.defined()) continue;
      g.add_(g * g * (params[i].detach() - w_k[i]), lambda_);
    }
    return 1.0;
  }

 private:
  double lambda_;
  std::vector<std::vector<torch::Tensor>> pulled_;
};

// Maranjyan, Tyurin & Richtárik 2025: a gradient more than R updates stale is dropped.
class RingmasterRule final : public AspServerRule {
 public:
  explicit RingmasterRule(const scenarios::AspSpec& spec) : spec_(spec) {}
  double prepare(const AspPush& push, std::vector<torch::Tensor>&) override {
    return spec_.applies(push.staleness) ? 1.0 : 0.0;
  }

 private:
  scenarios::AspSpec spec_;
};

// Rescaled ASGD: η t_k / mean_j t_j, over each worker's latest compute time.
class RescaledRule final : public AspServerRule {
 public:
  explicit RescaledRule(std::size_t workers) : latest_s_(workers) {}
  double prepare(const AspPush& push, std::vector<torch::Tensor>&) override {
    latest_s_[push.worker] = push.compute_s;
    double sum = 0.0;
    int n = 0;
    for (const auto& t : latest_s_) {
      if (t) sum += *t, ++n;
    }
    const double mean = sum / static_cast<double>(n);
    return mean > 0.0 ? push.compute_s / mean : 1.0;
  }

 private:
  std::vector<std::optional<double>> latest_s_;
};

// staleness-bounded: nothing dropped; a push's step weighted by its samples and shrunk beyond the bound R.
class StalenessBoundedRule final : public AspServerRule {
 public:
  StalenessBoundedRule(std::int64_t bound, double b_ref) : bound_(bound), b_ref_(b_ref) {}
  double prepare(const AspPush& push, std::vector<torch::Tensor>&) override {
    return staleness_bounded_factor(push.batch, b_ref_, push.staleness, bound_);
  }

 private:
  std::int64_t bound_;
  double b_ref_;
};

}  // namespace

double staleness_bounded_factor(BatchSize batch, double b_ref, std::int64_t staleness, std::int64_t bound) {
  OMNI_CHECK(b_ref > 0.0 && bound >= 1 && batch >= 1, "staleness_bounded_factor: needs b_ref > 0, R >= 1, b_k >= 1");
  const double by_batch = static_cast<double>(batch) / b_ref;
  if (staleness <= bound) return by_batch;
  return by_batch * static_cast<double>(bound) / static_cast<double>(staleness);
}

void AspServerRule::pulled(WorkerId, const std::vector<torch::Tensor>&) {}

std::unique_ptr<AspServerRule> make_asp_server_rule(const scenarios::AspSpec& spec, std::size_t workers, double b_ref) {
  switch (spec.rule) {
    case AspRule::kStalenessBounded: return std::make_unique<StalenessBoundedRule>(spec.delay_threshold, b_ref);
    case AspRule::kStalenessAware: return std::make_unique<StalenessAwareRule>();
    case AspRule::kDcAsgd: return std::make_unique<DcAsgdRule>(spec.dc_lambda, workers);
    case AspRule::kRingmaster: return std::make_unique<RingmasterRule>(spec);
    case AspRule::kRescaled: return std::make_unique<RescaledRule>(workers);
    case AspRule::kAsgd:
    case AspRule::kSsp: break;
  }
  return std::make_unique<PlainRule>();
}

bool apply_gradient(AspServerRule& rule, torch::optim::SGD& sgd, std::vector<torch::Tensor>& params,
                    const AspPush& push, double lr) {
  const double factor = rule.prepare(push, params);
  if (factor <= 0.0) return false;
  static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).lr(lr * factor);
  sgd.step();
  return true;
}

double asp_step_size(const scenarios::EmulatorSpec& settings, BatchSize batch, double b_ref, std::int64_t update) {
  double lr = settings.learning_rate;
  if (settings.lr_scaling) lr *= lr_scale(settings.lr_scaling_rule, static_cast<double>(batch) / b_ref);
  if (settings.warmup_updates > 0) {
    lr *= std::min(1.0, static_cast<double>(update) / static_cast<double>(settings.warmup_updates));
  }
  return lr;
}

void overwrite_parameters(std::vector<torch::Tensor>& params, const torch::Tensor& flat) {
  torch::NoGradGuard ng;
  std::int64_t at = 0;
  for (auto& p : params) {
    p.copy_(flat.narrow(0, at, p.numel()).view_as(p));
    at += p.numel();
  }
}

void LocalSgd::step(torch::Tensor& w, const torch::Tensor& g, double lr) {
  torch::NoGradGuard ng;
  torch::Tensor d = g;
  if (momentum_ != 0.0) {
    if (!buf_.defined()) {
      buf_ = g.clone();
    } else {
      buf_.mul_(momentum_).add_(g);
    }
    d = buf_;
  }
  w.add_(d, -lr);
  ++steps_;
}

}  // namespace omnilearn::emulator::worker
