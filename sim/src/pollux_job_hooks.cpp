#include "pollux_job_hooks.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace omnilearn::sim {

Status apply_pollux_job_model(const ClusterSimOptions& options, const traces::JobSpec& job,
                              const std::vector<std::string>& kinds, double& total_samples) {
  if (!options.measured_steps && !options.statistical_efficiency) return Status::ok();
  const std::string where = "job '" + job.name + "': ";
  if (options.pollux == nullptr) return Status::invalid_argument(where + "Pollux's job model is not loaded");
  const std::string app = traces::PolluxJobModel::application(job.model);
  if (app.empty() || !options.pollux->has(app)) {
    return Status::invalid_argument(where + "model '" + job.model +
                                    "' is none of Pollux's applications (resnet18, resnet50, bert, deepspeech2, "
                                    "yolov3, ncf): step_model measured and statistical_efficiency need one");
  }
  for (const std::string& kind : kinds) {
    if (kind != "t4") {
      return Status::invalid_argument(where + "Pollux measured its steps on t4; the cluster has '" + kind + "'");
    }
  }
  if (options.measured_steps && job.mode != traces::JobMode::kBsp) {
    return Status::invalid_argument(where + "step_model measured steps BSP jobs only");
  }
  if (options.statistical_efficiency && job.epochs > 0.0) {
    auto need = options.pollux->samples_needed(app, static_cast<double>(job.global_batch), job.epochs);
    if (!need.is_ok()) return Status::invalid_argument(where + need.status().message());
    total_samples = *need;
  }
  return Status::ok();
}

Result<Seconds> pollux_step_s(const traces::PolluxJobModel& model, const traces::JobSpec& job,
                              const AdaptiveBatch& adaptive, const std::vector<int>& placement) {
  const BatchSize batch = current_batch(job, adaptive);
  auto s = model.job_step(traces::PolluxJobModel::application(job.model), placement, batch);
  if (!s.is_ok()) return s.status();
  return s->seconds * static_cast<double>(batch) / static_cast<double>(s->batch);
}

namespace {

constexpr BatchSize kNcfBatch = 32768;  // Pollux's simulator runs every ncf job at this batch on one GPU
constexpr int kCandidates = 32;         // batches tried per GPU count (Pollux's goodput optimisation tries 50)

// The batches `app` may train at: kCandidates geometric steps from the smallest to the largest validated batch.
std::vector<BatchSize> candidate_batches(const traces::PolluxJobModel& model, const std::string& app) {
  if (app == "ncf") return {kNcfBatch};
  const double lo = static_cast<double>(model.init_batch(app)), hi = static_cast<double>(model.max_batch(app));
  std::vector<BatchSize> out;
  for (int i = 0; i < kCandidates; ++i) {
    const double b = lo * std::pow(hi / lo, static_cast<double>(i) / (kCandidates - 1));
    const auto r = std::clamp(static_cast<BatchSize>(std::llround(b)), model.init_batch(app), model.max_batch(app));
    if (out.empty() || r > out.back()) out.push_back(r);
  }
  return out;
}

// Samples/s of `app` on n GPUs packed `per_host` to a host, at each candidate batch (0 where the batch leaves a
// local batch below the smallest measured).
Result<std::vector<double>> throughputs(const traces::PolluxJobModel& model, const std::string& app, int n,
                                        int per_host, const std::vector<BatchSize>& candidates) {
  std::vector<int> placement;
  for (int left = n; left > 0; left -= per_host) placement.push_back(std::min(left, per_host));
  std::vector<double> out(candidates.size(), 0.0);
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    if (static_cast<double>(candidates[c]) < model.min_local_batch(app) * n && app != "ncf") continue;
    auto s = model.job_step(app, placement, candidates[c]);
    if (!s.is_ok()) return s.status();
    out[c] = static_cast<double>(s->batch) / s->seconds;
  }
  return out;
}

}  // namespace

Status fill_goodput_facts(const ClusterSimOptions& options, const traces::JobSpec& job,
                          const scheduler::ClusterFacts& cluster, double samples, AdaptiveBatch& state,
                          scheduler::JobFacts& f) {
  if (!options.measured_steps || !options.statistical_efficiency || job.epochs <= 0.0) return Status::ok();
  const traces::PolluxJobModel& model = *options.pollux;
  const std::string app = traces::PolluxJobModel::application(job.model);
  const std::string where = "job '" + job.name + "': ";
  if (state.candidates.empty()) state.candidates = candidate_batches(model, app);
  int per_host = 1;
  for (const scheduler::HostFacts& h : cluster.hosts) per_host = std::max(per_host, h.slots);
  const auto most = static_cast<int>(static_cast<double>(model.max_batch(app)) / model.min_local_batch(app));
  const int max_n = app == "ncf" ? 1 : std::clamp(most, 1, cluster.total_slots());
  const BatchSize now = current_batch(job, state);
  auto epochs =
      model.epochs_after(app, static_cast<double>(now), state.epochs_at, samples - state.samples_at, job.epochs);
  if (!epochs.is_ok()) return Status::invalid_argument(where + epochs.status().message());
  const auto epoch = static_cast<std::int64_t>(std::min(std::floor(*epochs), std::ceil(job.epochs) - 1.0));
  std::vector<double> efficiency(state.candidates.size(), 0.0);
  for (std::size_t c = 0; c < state.candidates.size(); ++c) {
    auto e = model.efficiency(app, static_cast<double>(state.candidates[c]), epoch);
    if (!e.is_ok()) return Status::invalid_argument(where + e.status().message());
    efficiency[c] = *e;
  }
  f.min_workers = 1;
  f.max_workers = max_n;
  f.goodput_by_workers.assign(static_cast<std::size_t>(max_n), 0.0);
  f.batch_by_workers.assign(static_cast<std::size_t>(max_n), state.candidates.front());
  for (int n = 1; n <= max_n; ++n) {
    if (state.throughput.size() < static_cast<std::size_t>(n)) {
      auto t = throughputs(model, app, n, per_host, state.candidates);
      if (!t.is_ok()) return Status::invalid_argument(where + t.status().message());
      state.throughput.push_back(std::move(t).value());
    }
    const std::vector<double>& t = state.throughput[static_cast<std::size_t>(n - 1)];
    for (std::size_t c = 0; c < t.size(); ++c) {
      if (t[c] * efficiency[c] > f.goodput_by_workers[static_cast<std::size_t>(n - 1)]) {
        f.goodput_by_workers[static_cast<std::size_t>(n - 1)] = t[c] * efficiency[c];
        f.batch_by_workers[static_cast<std::size_t>(n - 1)] = state.candidates[c];
      }
    }
  }
  return Status::ok();
}

Status switch_batch(const ClusterSimOptions& options, const traces::JobSpec& job, BatchSize batch, double samples,
                    AdaptiveBatch& state, double& total_samples) {
  const BatchSize now = current_batch(job, state);
  if (batch == now) return Status::ok();
  const traces::PolluxJobModel& model = *options.pollux;
  const std::string app = traces::PolluxJobModel::application(job.model);
  const std::string where = "job '" + job.name + "': ";
  auto epochs =
      model.epochs_after(app, static_cast<double>(now), state.epochs_at, samples - state.samples_at, job.epochs);
  if (!epochs.is_ok()) return Status::invalid_argument(where + epochs.status().message());
  auto left = model.samples_between(app, static_cast<double>(batch), *epochs, job.epochs);
  if (!left.is_ok()) return Status::invalid_argument(where + left.status().message());
  state.batch = batch;
  state.epochs_at = *epochs;
  state.samples_at = samples;
  total_samples = samples + *left;
  return Status::ok();
}

nlohmann::ordered_json job_model_json(const ClusterSimOptions& options) {
  nlohmann::ordered_json j;
  j["step_model"] = options.measured_steps ? "measured" : "ring";
  j["statistical_efficiency"] = options.statistical_efficiency ? "on" : "off";
  j["source"] = options.job_model_source;
  return j;
}

}  // namespace omnilearn::sim
