#include "omnilearn/emulator/torch_numerics.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/data_partition.h"
#include "omnilearn/emulator/global_sampler.h"
#include "asp_update_rule.h"
#include "torch_parts.h"

namespace omnilearn::emulator {
namespace {

using worker::Net;
using worker::Split;

std::int64_t count_parameters(const std::vector<torch::Tensor>& params) {
  std::int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

torch::Tensor flat_parameters(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard ng;
  std::vector<torch::Tensor> parts;
  parts.reserve(params.size());
  for (const auto& p : params) parts.push_back(p.detach().reshape(-1));
  return torch::cat(parts).contiguous();
}

void load_parameters(std::vector<torch::Tensor>& params, const torch::Tensor& flat) {
  torch::NoGradGuard ng;
  std::int64_t at = 0;
  for (auto& p : params) {
    p.copy_(flat.narrow(0, at, p.numel()).view_as(p));
    at += p.numel();
  }
}

// Adds lambda x the gradients of `params` to `acc` as the testbed's BSP worker packs them (float, scaled, summed).
void add_gradients(const std::vector<torch::Tensor>& params, double lambda, torch::Tensor& acc) {
  torch::NoGradGuard ng;
  std::int64_t at = 0;
  for (const auto& p : params) {
    if (p.grad().defined()) acc.narrow(0, at, p.numel()).add_(p.grad().reshape(-1).mul(lambda));
    at += p.numel();
  }
}

void set_gradients(std::vector<torch::Tensor>& params, const torch::Tensor& flat) {
  torch::NoGradGuard ng;
  std::int64_t at = 0;
  for (auto& p : params) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    p.mutable_grad().copy_(flat.narrow(0, at, p.numel()).view_as(p));
    at += p.numel();
  }
}

torch::Tensor flat_gradients(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard ng;
  std::vector<torch::Tensor> parts;
  parts.reserve(params.size());
  for (const auto& p : params) {
    parts.push_back(p.grad().defined() ? p.grad().reshape(-1) : torch::zeros({p.numel()}, p.options()));
  }
  return torch::cat(parts).contiguous();
}

void copy_gradients(const std::vector<torch::Tensor>& from, std::vector<torch::Tensor>& to) {
  torch::NoGradGuard ng;
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (!to[i].grad().defined()) to[i].mutable_grad() = torch::zeros_like(to[i]);
    if (from[i].grad().defined()) to[i].mutable_grad().copy_(from[i].grad());
    else to[i].mutable_grad().zero_();
  }
}

torch::Tensor index_tensor(std::span<const std::int64_t> idx) {
  return torch::from_blob(const_cast<std::int64_t*>(idx.data()), {static_cast<std::int64_t>(idx.size())},
                          torch::kInt64);
}

void set_lr(torch::optim::SGD& sgd, double lr) {
  static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).lr(lr);
}

// The testbed's warm-up ramp for the `update`-th update (1-based).
double warmup(const scenarios::EmulatorSpec& s, std::int64_t update) {
  if (s.warmup_updates <= 0) return 1.0;
  return std::min(1.0, static_cast<double>(update) / static_cast<double>(s.warmup_updates));
}

class TorchNumerics final : public sim::TrainingNumerics {
 public:
  TorchNumerics(const scenarios::Scenario& scenario, int threads)
      : scenario_(scenario),
        settings_(scenario.emulator),
        asp_(scenario.workload.asp),
        own_copies_(asp_.update == scenarios::AspUpdate::kModelOverwrite || asp_.pull == scenarios::AspPull::kPerEpoch),
        workers_(scenario.worker_count()),
        threads_(threads) {}

  Status init() try {
    at::set_num_threads(threads_ > 0 ? threads_ : host_cpu_count());
    auto network = resolve_network(scenario_);
    if (!network) return network.status();
    settings_.network = *network;
    if (!settings_.model_file.empty()) settings_.model_file = scenario_.resolve_path(settings_.model_file);
    if (!settings_.train_data.empty()) settings_.train_data = scenario_.resolve_path(settings_.train_data);
    if (!settings_.test_data.empty()) settings_.test_data = scenario_.resolve_path(settings_.test_data);
    std::string data_dir;
    if (settings_.train_data.empty()) {
      auto dir = prepare_fashion_mnist(settings_.data_source,
                                       settings_.cache_dir.empty() ? default_dataset_cache_dir() : settings_.cache_dir);
      if (!dir) return dir.status().with_context("emulator.data_source");
      data_dir = *dir;
    }
    auto train = worker::load_split(settings_, data_dir, /*train=*/true, scenario_.workload.dataset_samples);
    if (!train) return train.status();
    train_ = std::move(train).value();
    auto test = worker::load_split(settings_, data_dir, /*train=*/false, settings_.eval_samples);
    if (!test) return test.status();
    test_ = std::move(test).value();
    auto device = worker::torch_device(settings_.device);
    if (!device) return device.status().with_context("emulator.device");
    // The testbed's initial weights: every process seeds Torch with the scenario's seed, then builds the network.
    torch::manual_seed(scenario_.seed);
    auto net = worker::make_net(settings_, *device);
    if (!net) return net.status();
    net_ = std::move(net).value();
    parameters_ = count_parameters(net_.parameters);
    sgd_.emplace(net_.parameters, torch::optim::SGDOptions(settings_.learning_rate).momentum(settings_.momentum));
    const std::int64_t n = train_.images.size(0);
    if (scenario_.mode == controller::TrainingMode::kBsp) {
      sampler_.emplace(n, scenario_.seed);
      return Status::ok();
    }
    // ASP: the server is net_; worker iterations run on a second copy loaded with the version each worker pulled.
    torch::manual_seed(scenario_.seed);
    auto scratch = worker::make_net(settings_, *device);
    if (!scratch) return scratch.status();
    scratch_ = std::move(scratch).value();
    // Each worker's own seeded order over the samples it holds (workload.partition), as on the testbed.
    const torch::Tensor labels = train_.labels.to(torch::kCPU, torch::kInt64).contiguous();
    const std::span<const std::int64_t> label_span(labels.data_ptr<std::int64_t>(), static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < workers_; ++k) {
      const std::uint64_t seed = scenario_.seed + 7919u * static_cast<std::uint64_t>(k + 1);
      std::vector<std::int64_t> mine = partition_samples(label_span, workers_, k, scenario_.workload.partition);
      if (mine.empty()) {
        samplers_.emplace_back(n, seed);
      } else {
        samplers_.emplace_back(std::move(mine), seed);
      }
    }
    b_ref_ = std::max(1.0, static_cast<double>(scenario_.workload.global_batch) / static_cast<double>(workers_));
    rule_ = worker::make_asp_server_rule(asp_, workers_, b_ref_);
    pulled_.assign(workers_, nullptr);
    pulled_version_.assign(workers_, 0);
    own_updates_.assign(workers_, 0);
    if (own_copies_) {
      own_.resize(workers_);
      local_sgd_.assign(workers_, worker::LocalSgd(settings_.momentum));
      peak_versions_ = static_cast<std::int64_t>(workers_) + 1;  // each worker's copy and the server's
    }
    for (std::size_t k = 0; k < workers_; ++k) asp_pull(static_cast<WorkerId>(k));
    return Status::ok();
  } catch (const std::exception& e) {
    return Status::internal(std::string("workload.numerics: real: LibTorch failed while loading: ") + e.what());
  }

  Result<std::vector<std::optional<sim::BatchOutcome>>> bsp_step(std::span<const BatchSize> batch,
                                                                 const std::vector<bool>& lost) override try {
    std::vector<std::optional<sim::BatchOutcome>> out(batch.size());
    if (std::all_of(batch.begin(), batch.end(), [](BatchSize b) { return b <= 0; })) return out;
    const StepAssignment a = sampler_->next(batch);
    BatchSize live = 0;
    for (std::size_t k = 0; k < a.batch.size(); ++k) {
      if (a.batch[k] > 0 && !lost[k]) live += a.batch[k];
    }
    ++updates_;  // the step happened, even if every worker's work was lost (the warm-up counts steps)
    if (live == 0) return out;
    if (!acc_.defined()) acc_ = torch::zeros({parameters_}, torch::kFloat32);
    acc_.zero_();
    for (std::size_t k = 0; k < a.batch.size(); ++k) {
      if (a.batch[k] <= 0 || lost[k]) continue;  // lost work is lost: its samples were drawn, never applied
      const torch::Tensor idx = index_tensor(sampler_->indices(a, k));
      const worker::StepResult r =
          worker::forward_backward(net_, train_.images.index_select(0, idx), train_.labels.index_select(0, idx));
      add_gradients(net_.parameters, static_cast<double>(a.batch[k]) / static_cast<double>(live), acc_);
      out[k] = sim::BatchOutcome{r.loss, r.accuracy};
    }
    set_gradients(net_.parameters, acc_);
    set_lr(*sgd_, settings_.learning_rate * warmup(settings_, updates_));
    sgd_->step();
    return out;
  } catch (const std::exception& e) {
    return Status::internal("workload.numerics: real: LibTorch failed at step " + std::to_string(updates_) + ": " +
                            e.what());
  }

  Result<sim::BatchOutcome> asp_push(WorkerId k, BatchSize batch, std::int64_t staleness,
                                     Seconds compute_s) override try {
    const std::int64_t applied_staleness = updates_ - pulled_version_[k] - own_updates_[k];
    if (applied_staleness != staleness) {
      return Status::internal("workload.numerics: real: worker " + std::to_string(k) + "'s push is " +
                              std::to_string(applied_staleness) + " versions stale, the simulator says " +
                              std::to_string(staleness));
    }
    if (batch <= 0) return sim::BatchOutcome{};
    const std::vector<BatchSize> mine{batch};
    const StepAssignment a = samplers_[k].next(mine);
    const BatchSize got = a.batch[0];  // the end of this worker's permutation may shrink it, as on the testbed
    load_parameters(scratch_.parameters, own_copies_ ? own_[k] : pulled_[k]->flat);
    const torch::Tensor idx = index_tensor(samplers_[k].indices(a, 0));
    const worker::StepResult r =
        worker::forward_backward(scratch_, train_.images.index_select(0, idx), train_.labels.index_select(0, idx));
    const worker::AspPush push{k, got, staleness, compute_s};
    bool applied = false;
    if (!own_copies_) {
      copy_gradients(scratch_.parameters, net_.parameters);
      applied = worker::apply_gradient(*rule_, *sgd_, net_.parameters, push,
                                       worker::asp_step_size(settings_, got, b_ref_, updates_ + 1));
    } else {
      // The worker's local step on its own copy, as the testbed's worker takes it; then what it pushes.
      const torch::Tensor g = flat_gradients(scratch_.parameters);
      local_sgd_[k].step(own_[k], g, worker::asp_step_size(settings_, got, b_ref_, local_sgd_[k].steps() + 1));
      if (asp_.update == scenarios::AspUpdate::kModelOverwrite) {
        worker::overwrite_parameters(net_.parameters, own_[k]);
        applied = true;
      } else {
        set_gradients(net_.parameters, g);
        applied = worker::apply_gradient(*rule_, *sgd_, net_.parameters, push,
                                         worker::asp_step_size(settings_, got, b_ref_, updates_ + 1));
      }
    }
    if (applied) {
      ++updates_;
      ++own_updates_[k];
      current_.reset();  // the server's parameters moved: the next pull takes a new version
    }
    return sim::BatchOutcome{r.loss, r.accuracy};
  } catch (const std::exception& e) {
    return Status::internal("workload.numerics: real: LibTorch failed at update " + std::to_string(updates_) + ": " +
                            e.what());
  }

  void asp_pull(WorkerId k) override {
    rule_->pulled(k, net_.parameters);
    pulled_version_[k] = updates_;
    own_updates_[k] = 0;
    if (own_copies_) {
      own_[k] = flat_parameters(net_.parameters);  // a fresh tensor: the worker's copy from now on
      return;
    }
    if (!current_) {
      current_ = std::make_shared<Version>(flat_parameters(net_.parameters), &live_versions_);
      peak_versions_ = std::max(peak_versions_, live_versions_);
    }
    pulled_[k] = current_;
  }

  Result<sim::EvaluationOutcome> evaluate() override try {
    const worker::Evaluation ev = worker::evaluate(net_, test_);
    return sim::EvaluationOutcome{ev.loss, ev.accuracy};
  } catch (const std::exception& e) {
    return Status::internal(std::string("workload.numerics: real: LibTorch failed in an evaluation: ") + e.what());
  }

  std::int64_t parameters() const override { return parameters_; }
  std::int64_t peak_versions() const override { return peak_versions_; }

 private:
  // One parameter version that workers pulled, shared by all of them; counts itself while it lives.
  struct Version {
    Version(torch::Tensor f, std::int64_t* live) : flat(std::move(f)), live_count(live) { ++*live_count; }
    ~Version() { --*live_count; }
    Version(const Version&) = delete;
    Version& operator=(const Version&) = delete;
    torch::Tensor flat;
    std::int64_t* live_count;
  };

  const scenarios::Scenario& scenario_;
  scenarios::EmulatorSpec settings_;  // network and paths resolved
  const scenarios::AspSpec asp_;
  // ASP: each worker trains on its own copy (update: model-overwrite, or pull: per-epoch), not on what it pulled.
  const bool own_copies_;
  const std::size_t workers_;
  const int threads_;
  Split train_, test_;
  Net net_;      // BSP: the shared model; ASP: the server's
  Net scratch_;  // ASP: where a worker's iteration runs, on the version it pulled
  std::int64_t parameters_ = 0;
  std::optional<torch::optim::SGD> sgd_;
  std::optional<GlobalSampler> sampler_;   // BSP: the global sampler
  std::vector<GlobalSampler> samplers_;    // ASP: one per worker
  torch::Tensor acc_;                      // BSP: the step's combined gradient
  std::int64_t updates_ = 0;
  double b_ref_ = 1.0;
  std::int64_t live_versions_ = 0, peak_versions_ = 0;
  std::shared_ptr<Version> current_;               // the server's parameters as last pulled, while unchanged
  std::vector<std::shared_ptr<Version>> pulled_;   // the version each worker computes on
  std::vector<std::int64_t> pulled_version_;       // the server's update count when it pulled
  std::vector<std::int64_t> own_updates_;          // each worker's own updates since it pulled (not stale to it)
  std::unique_ptr<worker::AspServerRule> rule_;    // ASP: the server's rule for a pushed gradient
  std::vector<torch::Tensor> own_;                 // own_copies_: each worker's flat parameters
  std::vector<worker::LocalSgd> local_sgd_;        // own_copies_: each worker's local step and momentum
};

}  // namespace

Result<std::unique_ptr<sim::TrainingNumerics>> make_torch_numerics(const scenarios::Scenario& scenario,
                                                                   const TorchNumericsOptions& options) {
  auto numerics = std::make_unique<TorchNumerics>(scenario, options.threads);
  OMNI_RETURN_IF_ERROR(numerics->init());
  return std::unique_ptr<sim::TrainingNumerics>(std::move(numerics));
}

sim::NumericsFactory torch_numerics_factory(TorchNumericsOptions options) {
  return [options](const scenarios::Scenario& scenario) { return make_torch_numerics(scenario, options); };
}

}  // namespace omnilearn::emulator
