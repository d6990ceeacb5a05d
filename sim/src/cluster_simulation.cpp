#include "omnilearn/sim/cluster_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cluster_jobs_table.h"
#include "cluster_sim.h"
#include "collective_model.h"
#include "finish_time_fairness.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/run/asp_schedule.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/run/jobs_stop.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/scenarios/model_catalog.h"
#include "omnilearn/scheduler/scheduler_registry.h"
#include "omnilearn/sim/simulation.h"
#include "omnilearn/traces/text_file.h"
#include "pollux_job_hooks.h"

namespace omnilearn::sim {

using traces::shortest_number;

namespace {

// Parameters of the device table's models that the catalogue does not hold, each from its paper or reference code.
struct ModelSize {
  const char* name;
  double parameters;
};
constexpr ModelSize kMoreModels[] = {
    {"bert", 110e6},         // BERT-base (Devlin et al., NAACL 2019, section 3)
    {"transformer", 65e6},   // Transformer base (Vaswani et al., NeurIPS 2017, table 3)
    {"yolov3", 61.9e6},      // YOLOv3-416, Darknet-53 backbone (Redmon and Farhadi, 2018; its reference code)
    {"cyclegan", 28.286e6},  // two ResNet-9 generators (11.378 M each) and two PatchGAN critics (2.765 M each)
    // NeuMF-end as Pollux trains it (adaptdl's examples/NCF: MovieLens-1M, 6,040 users and 3,706 items, 32 factors,
    // 3 MLP layers): embeddings 9,746 x (32 + 128), MLP 256-128-64-32, a 64-to-1 output.
    {"ncf", 1602657.0},
    // DeepSpeech2 as Pollux trains it (adaptdl's benchmark/models/deepspeech2: two convolutions 41x11 and 21x11 of 32
    // channels, 5 bidirectional GRU layers of 800 on 1,312 inputs, 29 labels): 41,187,968.
    {"deepspeech2", 41187968.0},
};

}  // namespace

namespace cluster {

Status ClusterSim::prepare(const std::vector<traces::JobSpec>& specs) {
  auto policy = scheduler::make_default_scheduler_registry().make(options_.scheduler, options_.scheduling);
  if (!policy.is_ok()) return policy.status();
  const bool packing = options_.scheduling.packing;
  if (packing && options_.packed_speeds == nullptr) {
    return Status::invalid_argument("packing needs the packed-pair table (--packed-speeds)");
  }
  if ((*policy)->packs_devices() && !packing) {
    return Status::invalid_argument("scheduler '" + options_.scheduler +
                                    "' packs jobs two to a device: it needs packing (packing: true, --packing)");
  }
  allocations_csv_ = run::allocations_csv_header(packing);
  for (const scenarios::DeviceGroup& g : cluster_.groups) {
    for (std::int64_t n = 0; n < g.nodes; ++n) {
      // Named by the node's index in the cluster: two groups may hold the same kind.
      const std::string name = g.device + "-" + std::to_string(facts_.hosts.size());
      facts_.hosts.push_back({name, g.device, static_cast<int>(g.gpus_per_node)});
    }
  }
  const std::vector<std::string> kinds = facts_.kinds();
  jobs_.resize(specs.size());
  for (std::size_t j = 0; j < specs.size(); ++j) OMNI_RETURN_IF_ERROR(prepare_job(specs[j], j, kinds));
  if (packing) prepare_packing(kinds);
  std::vector<Seconds> arrivals;
  arrivals.reserve(jobs_.size());
  for (const Job& job : jobs_) arrivals.push_back(job.spec->arrival_s);
  driver_.emplace(std::move(policy).value(), facts_, std::move(arrivals),
                  [this](std::size_t j) { return job_facts(jobs_[j]); }, packed_pairs_);
  if (options_.energy) energy_.emplace(*options_.energy, jobs_.size());
  return Status::ok();
}

Status ClusterSim::prepare_job(const traces::JobSpec& s, std::size_t j, const std::vector<std::string>& kinds) {
  Job& job = jobs_[j];
  job.spec = &s;
  job.index = j;
  job.outcome.name = s.name;
  job.outcome.arrival_s = s.arrival_s;
  const std::string where = "job '" + s.name + "'";
  if (s.epochs <= 0.0 && options_.metric_curves == nullptr) {
    return Status::invalid_argument(where +
                                    ": no epochs, and no measured metric curves to say when its target "
                                    "is reached; give epochs");
  }
  if (s.global_batch < s.max_workers) {
    return Status::invalid_argument(where + ": global_batch " + std::to_string(s.global_batch) +
                                    " is smaller than max_workers " + std::to_string(s.max_workers));
  }
  if (s.epochs > 0.0) {
    job.total_samples = s.epochs * static_cast<double>(s.dataset_samples);
  } else {  // a target alone: the samples the model's measured curve takes to reach it
    auto samples = options_.metric_curves->samples_to_target(s.model, s.global_batch, s.target);
    if (!samples.is_ok()) return Status::invalid_argument(where + ": " + samples.status().message());
    job.total_samples = *samples;
  }
  // Pollux's measured job model: checks the job, and with statistical efficiency sets its samples.
  OMNI_RETURN_IF_ERROR(apply_pollux_job_model(options_, s, kinds, job.total_samples));
  if (s.mode == traces::JobMode::kAsp) {
    auto asp = scenarios::parse_job_asp_rule(s.asp_rule);
    if (!asp.is_ok()) return Status::invalid_argument(where + ": " + asp.status().message());
    job.asp = *asp;
  }
  {  // the job's batch policy, checked now rather than when the job first runs
    run::ControllerSpec spec;
    spec.policy = s.batch_policy;
    spec.options.global_batch = s.global_batch;
    spec.options.workers.assign(static_cast<std::size_t>(s.workers), controller::WorkerSpec{1, s.global_batch, 1.0});
    auto made = run::make_controller(spec);
    if (!made.is_ok()) {
      return Status::invalid_argument(where + ": batch_policy '" + s.batch_policy + "': " + made.status().message());
    }
  }
  const auto given = options_.model_parameters.find(s.model);
  auto params = given != options_.model_parameters.end() ? Result<double>(given->second) : model_parameters(s.model);
  if (!params.is_ok()) return Status::invalid_argument(where + ": " + params.status().message());
  job.gradient_bytes = 4.0 * *params;
  const std::int64_t per_worker = std::max<std::int64_t>(1, s.global_batch / s.workers);
  auto known = curves_of_model_.find(s.model);
  if (known == curves_of_model_.end()) {
    std::vector<traces::SpeedCurve> curves;
    for (const std::string& kind : kinds) {
      auto curve = speeds_.curve(s.model, kind);
      if (!curve.is_ok()) return Status::invalid_argument(where + ": " + curve.status().message());
      curves.push_back(std::move(curve).value());
    }
    known = curves_of_model_.emplace(s.model, std::move(curves)).first;
  }
  job.curves = &known->second;
  for (std::size_t k = 0; k < kinds.size(); ++k) job.throughput[kinds[k]] = known->second[k].samples_per_s(per_worker);
  for (const std::string& kind : kinds) job.outcome.device_s[kind] = 0.0;
  return Status::ok();
}

void ClusterSim::prepare_packing(const std::vector<std::string>& kinds) {
  // The pairs the table lets gain, for each two (model, batch) keys present and each kind.
  std::set<std::pair<std::string, std::int64_t>> keys;
  for (const Job& job : jobs_) {
    if (job.spec->min_workers == 1) keys.insert({job.spec->model, job.spec->global_batch});
  }
  const auto key = [](const std::pair<std::string, std::int64_t>& k) {
    return k.first + "/" + std::to_string(k.second);
  };
  for (auto a = keys.begin(); a != keys.end(); ++a) {
    for (auto b = a; b != keys.end(); ++b) {
      for (const std::string& kind : kinds) {
        const auto f = options_.packed_speeds->fractions(kind, a->first, a->second, b->first, b->second);
        if (f) packed_pairs_.push_back({kind, key(*a), key(*b), f->first, f->second});
      }
    }
  }
  for (Job& job : jobs_) {
    if (job.spec->min_workers == 1) job.packing_key = key({job.spec->model, job.spec->global_batch});
  }
}

void ClusterSim::build_platform() {
  sg4::NetZone* zone = sg4::create_star_zone("omnilearn-jobs");
  // A non-blocking switch: the nodes' own links are where jobs meet.
  double total_Bps = 0.0;
  for (const scenarios::DeviceGroup& g : cluster_.groups) {
    total_Bps += static_cast<double>(g.nodes) * g.bandwidth_Bps.value_or(options_.node_bandwidth_Bps);
  }
  const sg4::Link* backbone =
      zone->create_link("switch", total_Bps)->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)->seal();
  const std::vector<std::string> kinds = facts_.kinds();
  std::size_t h = 0;
  for (const scenarios::DeviceGroup& g : cluster_.groups) {
    for (std::int64_t n = 0; n < g.nodes; ++n, ++h) {
      // One core per device at 1 flop/s: a worker's step is an execution of its compute seconds.
      sg4::Host* host = zone->create_host(facts_.hosts[h].name, std::vector<double>{1.0});
      // With packing, two cores per device: two packed workers compute side by side.
      host->set_core_count(static_cast<int>(g.gpus_per_node) * (options_.scheduling.packing ? 2 : 1));
      host->seal();
      const sg4::Link* link = zone->create_split_duplex_link(facts_.hosts[h].name + "-link",
                                                             g.bandwidth_Bps.value_or(options_.node_bandwidth_Bps))
                                  ->set_latency(g.latency_s.value_or(options_.node_latency_s))
                                  ->seal();
      zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                      {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(backbone)}, true);
      const auto kind =
          static_cast<std::size_t>(std::lower_bound(kinds.begin(), kinds.end(), g.device) - kinds.begin());
      hosts_.push_back({host, g.device, kind});
    }
  }
  zone->seal();
}

void ClusterSim::release(Job& job, Seconds now_s) {
  for (const scheduler::DeviceSlot& s : job.slots) {
    job.outcome.device_s[hosts_[s.host].kind] += now_s - job.held_since_s;
    if (!job.packed_with.empty()) job.packed_device_s[hosts_[s.host].kind] += now_s - job.held_since_s;
    if (energy_) energy_->held(job.index, hosts_[s.host].kind, now_s - job.held_since_s, energy_share(job));
  }
  job.held_since_s = now_s;
}

void ClusterSim::set_slots(Job& job, std::vector<scheduler::DeviceSlot> slots) {
  // slots are sorted: a host's devices are adjacent.
  const auto each_host = [&](int add) {
    const bool talks = !job.slots.empty() && job.slots.front().host != job.slots.back().host;
    for (std::size_t i = 0; i < job.slots.size(); ++i) {
      if (i > 0 && job.slots[i].host == job.slots[i - 1].host) continue;
      hosts_[job.slots[i].host].jobs += add;
      if (talks) hosts_[job.slots[i].host].talkers += add;
    }
  };
  each_host(-1);
  job.slots = std::move(slots);
  each_host(+1);
}

void ClusterSim::charge_busy(const Job& job, const std::vector<std::string>& kinds,
                             const std::vector<BatchSize>& batches, Seconds t0) {
  const Seconds elapsed_s = sg4::Engine::get_clock() - t0;
  if (!energy_ || elapsed_s <= 0.0) return;
  energy_->busy(job.index, kinds, std::vector<double>(batches.begin(), batches.end()), elapsed_s, energy_share(job));
}

namespace {

// Sets `to`'s values to `from`'s, reusing its nodes when both have the same keys (round after round, they do).
void assign_values(const std::map<std::string, double>& from, std::map<std::string, double>& to) {
  if (from.size() == to.size() &&
      std::equal(from.begin(), from.end(), to.begin(), [](const auto& a, const auto& b) { return a.first == b.first; })) {
    auto t = to.begin();
    for (const auto& [kind, v] : from) (t++)->second = v;
  } else {
    to = from;
  }
}

}  // namespace

scheduler::JobFacts ClusterSim::job_facts(const Job& job) const {
  scheduler::JobFacts f = scheduler::fixed_job_facts(
      job.spec->name, job.spec->arrival_s, static_cast<int>(job.spec->min_workers),
      static_cast<int>(job.spec->max_workers), job.throughput, job.spec->batch_policy != "uniform");
  f.packing_key = job.packing_key;
  return f;
}

void ClusterSim::refresh_facts(const Job& job, Seconds now_s, scheduler::JobFacts& f) const {
  f.remaining_samples = std::max(0.0, job.total_samples - job.samples_at(now_s));
  f.current = job.slots;
  assign_values(job.outcome.device_s, f.service_by_kind);
  assign_values(job.packed_device_s, f.packed_service_by_kind);
  f.waiting_s = job.slots.empty() ? now_s - job.waiting_since_s : 0.0;
}

Status ClusterSim::decide(Seconds now_s) {
  const auto finished = [&](std::size_t j) { return jobs_[j].outcome.finished(); };
  const auto arrived = [&](std::size_t j) {
    Job& job = jobs_[j];
    job.waiting_since_s = job.spec->arrival_s;
    job.enter(job.spec->arrival_s, "waiting");
  };
  const std::vector<std::size_t>& present = driver_->advance(now_s, finished, arrived);
  for (std::size_t i = 0; i < present.size(); ++i) {
    Job& job = jobs_[present[i]];
    release(job, now_s);  // brings its device time up to now
    refresh_facts(job, now_s, driver_->facts(i));
    if (driver_->policy().adapts_batches()) {
      OMNI_RETURN_IF_ERROR(adapt_job_facts(options_, facts_, job, job.samples_at(now_s), driver_->facts(i)));
    }
  }
  if (present.empty()) return Status::ok();
  auto allocation = driver_->decide();
  if (!allocation.is_ok()) return allocation.status();
  // Packed pairs: the two jobs given one device, and the fraction each keeps (the scheduler packed only measured
  // pairs, so the lookup answers). Only with packing can two jobs share one.
  std::map<scheduler::DeviceSlot, std::vector<std::size_t>> sharing;
  for (std::size_t i = 0; i < present.size() && options_.scheduling.packing; ++i) {
    for (const scheduler::DeviceSlot& s : allocation->jobs[i].slots) sharing[s].push_back(i);
  }
  std::vector<std::string> partner(present.size());
  std::vector<double> fraction(present.size(), 1.0);
  for (const auto& [slot, is] : sharing) {
    if (is.size() != 2) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      const Job& me = jobs_[present[is[side]]];
      const Job& other = jobs_[present[is[1 - side]]];
      const auto f = options_.packed_speeds->fractions(hosts_[slot.host].kind, me.spec->model, me.spec->global_batch,
                                                       other.spec->model, other.spec->global_batch);
      if (!f) return Status::internal("jobs '" + me.spec->name + "' and '" + other.spec->name + "' packed unmeasured");
      partner[is[side]] = other.spec->name;
      fraction[is[side]] = f->first;
    }
  }
  for (std::size_t i = 0; i < present.size(); ++i) {
    Job& job = jobs_[present[i]];
    if (job.outcome.finished()) continue;  // ended while decide() waited in a simcall
    const scheduler::JobAllocation& a = allocation->jobs[i];
    if (a.global_batch > 0 && a.global_batch != current_batch(*job.spec, job.adaptive)) {
      OMNI_RETURN_IF_ERROR(adopt_batch(options_, a.global_batch, job, job.samples_at(now_s)));
      // Kept at a new batch: its run of steps ends with the step in progress; the next ones train the new batch.
      if (a.change == scheduler::JobChange::kKept && job.run.since_s >= 0.0) {
        job.cut = true;
        cancel_step(job);
      }
    }
    const std::vector<std::pair<std::string, int>> by_kind = driver_->by_kind(a.slots);
    for (const auto& [kind, n] : by_kind) {
      allocations_csv_ +=
          run::allocations_csv_row(now_s, job.spec->name, kind, n,
                                   options_.scheduling.packing ? std::optional<std::string>(partner[i]) : std::nullopt);
    }
    std::string held;
    for (const auto& [kind, n] : by_kind) held += (held.empty() ? "" : " + ") + std::to_string(n) + " " + kind;
    if (!partner[i].empty()) held += " packed with " + partner[i];
    const bool repacked = partner[i] != job.packed_with;
    job.packed_with = partner[i];
    job.packed_fraction = fraction[i];
    if (a.change == scheduler::JobChange::kKept && repacked) job.enter(now_s, "running on " + held);
    if (a.change == scheduler::JobChange::kKept || a.change == scheduler::JobChange::kWaiting) continue;
    if (!job.slots.empty()) ++job.outcome.restarts;
    if (a.slots.empty()) job.waiting_since_s = now_s;
    set_slots(job, a.slots);
    ++job.generation;
    job.resume_at_s = now_s + a.restart_s;
    job.held_since_s = now_s;
    cancel_step(job);  // the step in progress is lost
    if (!job.slots.empty() && job.outcome.start_s < 0.0) job.outcome.start_s = now_s;
    if (job.slots.empty()) {
      job.enter(now_s, a.restart_s > 0.0 ? "checkpointing" : "waiting");
      if (a.restart_s > 0.0) job.enter(now_s + a.restart_s, "waiting");
    } else {
      if (a.restart_s > 0.0) job.enter(now_s, "restarting");
      job.enter(now_s + a.restart_s, "running on " + held);
    }
    if (!job.slots.empty() && !job.running_actor) {
      job.running_actor = true;
      const std::size_t j = job.index;
      sg4::Actor::create("job-" + std::to_string(j), hosts_[job.slots.front().host].host, [this, j] { job_actor(j); });
    }
  }
  flush_allocations(false);
  cut_changed_runs();
  changed_->notify_all();
  return Status::ok();
}

void ClusterSim::scheduler_actor() {
  const Seconds round_s = options_.scheduling.round_s;
  while (true) {
    // The job actors that SimGrid wakes at this instant (a last step ending on the round) record it first.
    sg4::this_actor::yield();
    const Seconds now_s = sg4::Engine::get_clock();
    const run::StopReason stop = run::jobs_run_stop(now_s, options_.max_time_s, options_.stop_requested);
    if (stop == run::StopReason::kRequested) {
      status_ = Status::internal("stopped on request at " + shortest_number(now_s) + " s (simulated)");
    }
    if (stop != run::StopReason::kNone) break;
    if (!status_.is_ok()) break;  // a job failed (its actor set the error)
    {
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      const Status st = decide(now_s);
      if (!st.is_ok()) {
        status_ = st;
        break;
      }
    }
    ++rounds_;
    if (options_.on_round) options_.on_round(now_s, done_, jobs_.size());
    if (done_ == jobs_.size()) break;
    // The next round; an idle cluster skips to the next arrival's round.
    const std::vector<std::size_t>& present = driver_->present();
    const bool idle = std::none_of(present.begin(), present.end(), [&](std::size_t j) { return !jobs_[j].outcome.finished(); });
    const Seconds next_s = driver_->next_round(now_s, round_s, idle, options_.max_time_s);
    next_round_s_ = next_s;
    sg4::this_actor::sleep_until(next_s);
  }
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  over_ = true;
  end_s_ = sg4::Engine::get_clock();
  for (Job& job : jobs_) {
    release(job, end_s_);
    cancel_step(job);
    if (!job.segment.empty()) job.enter(end_s_, "");
  }
  changed_->notify_all();
}

void ClusterSim::job_actor(std::size_t j) {
  Job& job = jobs_[j];
  std::uint64_t generation = 0;
  std::optional<controller::Controller> ctl;
  std::vector<sg4::Host*> hosts;
  std::vector<std::string> kinds;
  std::int64_t step_index = 0;
  while (true) {
    // What the job holds, read under the lock: releasing it yields, and the scheduler may change it meanwhile (a
    // change bumps job.generation, which every later step checks).
    std::uint64_t seen = 0;
    std::vector<scheduler::DeviceSlot> slots;
    {
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      changed_->wait(lock, [&] { return over_ || !job.slots.empty(); });
      if (over_ || !status_.is_ok()) break;
      seen = job.generation;
      slots = job.slots;
    }
    if (seen != generation) {
      generation = seen;
      if (sg4::Engine::get_clock() < job.resume_at_s) sg4::this_actor::sleep_until(job.resume_at_s);
      if (over_ || job.generation != generation) continue;  // the run ended, or the devices changed, meanwhile
      hosts.clear();
      kinds.clear();
      job.worker_kinds.clear();
      for (const scheduler::DeviceSlot& s : slots) {
        hosts.push_back(hosts_[s.host].host);
        kinds.push_back(hosts_[s.host].kind);
        job.worker_kinds.push_back(hosts_[s.host].kind_index);
      }
      // The job's own controller for this set of workers: bounds around the equal split.
      const auto n = static_cast<BatchSize>(hosts.size());
      const BatchSize B = job.spec->global_batch;
      run::ControllerSpec spec;
      spec.policy = job.spec->batch_policy;
      spec.options.mode =
          job.spec->mode == traces::JobMode::kAsp ? controller::TrainingMode::kAsp : controller::TrainingMode::kBsp;
      spec.options.global_batch = B;
      const BatchSize lo = std::max<BatchSize>(1, B / n / 4);
      const BatchSize hi = std::max<BatchSize>(lo, std::min<BatchSize>(B, (4 * B + n - 1) / n));
      spec.options.workers.assign(hosts.size(), controller::WorkerSpec{lo, hi, 1.0});
      auto made = run::make_controller(spec);
      if (!made.is_ok()) {
        status_ = Status::invalid_argument("job '" + job.spec->name + "': " + made.status().message());
        break;
      }
      ctl.emplace(std::move(made).value());
      job.steady_steps = 0;
      job.last_step_s = 0.0;
    }
    if (over_ || job.generation != generation) continue;  // no step on devices the job no longer holds
    bool interrupted = false;
    const Status st = step(job, *ctl, hosts, kinds, step_index, interrupted);
    if (!st.is_ok()) {
      status_ = st.with_context("job '" + job.spec->name + "'");
      break;
    }
    if (!interrupted && run::job_trained(job.outcome.steps, job.outcome.samples, job.total_samples)) {
      // No simcall before this is recorded (each is a yield): the scheduler must not see the job as still running.
      const Seconds now_s = sg4::Engine::get_clock();
      release(job, now_s);
      job.outcome.end_s = now_s;
      job.enter(now_s, "");
      set_slots(job, {});
      ++done_;
      break;
    }
  }
  job.running_actor = false;
}

Result<ClusterSummary> ClusterSim::run() {
  // omnilearn sim's SimGrid settings (CM02 without cross-traffic): one job alone steps as there.
  std::vector<std::string> args{"omnilearn-jobs"};
  for (const std::string& a : SimOptions{}.simgrid_args) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    sg4::Engine engine(&argc, argv.data());
    build_platform();
    const Status opened = open_allocations();
    if (!opened.is_ok()) return opened;
    mutex_ = sg4::Mutex::create();
    changed_ = sg4::ConditionVariable::create();
    sg4::Actor::create("scheduler", hosts_.front().host, [this] { scheduler_actor(); });
    engine.run();
  } catch (const std::exception& e) {
    return Status::internal(std::string("simgrid: ") + e.what());
  }
  // What was simulated is written also when the run stopped early (on request, or on a job's error).
  ClusterSummary summary = summarise(end_s_);
  const Status written = write(summary);
  if (!status_.is_ok()) return status_;
  OMNI_RETURN_IF_ERROR(written);
  return summary;
}

}  // namespace cluster

Result<double> model_parameters(const std::string& model) {
  if (auto m = scenarios::find_model(model, true)) return m->parameters;
  for (const ModelSize& s : kMoreModels) {
    if (model == s.name) return s.parameters;
  }
  std::string known;
  for (const std::string& m : scenarios::model_names()) known += (known.empty() ? "" : ", ") + m;
  for (const ModelSize& s : kMoreModels) known += std::string(", ") + s.name;
  return Status::invalid_argument("model '" + model + "': its parameter count is not known (known: " + known +
                                  "); give it (omnilearn jobs run --parameters " + model + "=N)");
}

namespace {

// What check_cluster_simulation checks before preparing the jobs (run_cluster_simulation prepares them once).
Status check_options(const std::vector<traces::JobSpec>& jobs, const scenarios::DeviceCluster& cluster,
                     const traces::DeviceSpeedTable& speeds, const ClusterSimOptions& options) {
  if (jobs.empty()) return Status::invalid_argument("no jobs to run");
  OMNI_RETURN_IF_ERROR(scheduler::validate_scheduler_options(options.scheduling));
  OMNI_RETURN_IF_ERROR(scenarios::check_device_kinds(cluster, speeds));
  if (!(std::isfinite(options.node_bandwidth_Bps) && options.node_bandwidth_Bps > 0.0)) {
    return Status::invalid_argument("node bandwidth: expected bytes/s > 0, got " +
                                    shortest_number(options.node_bandwidth_Bps));
  }
  if (!(std::isfinite(options.node_latency_s) && options.node_latency_s >= 0.0)) {
    return Status::invalid_argument("node latency: expected seconds >= 0, got " +
                                    shortest_number(options.node_latency_s));
  }
  if (!(std::isfinite(options.max_time_s) && options.max_time_s >= 0.0)) {
    return Status::invalid_argument("max time: expected seconds >= 0 (0: none), got " +
                                    shortest_number(options.max_time_s));
  }
  for (const auto& [model, n] : options.model_parameters) {
    if (!(std::isfinite(n) && n > 0.0 && n <= 1e13)) {
      return Status::invalid_argument("parameters of '" + model + "': expected a count in (0, 1e13], got " +
                                      shortest_number(n));
    }
  }
  if (options.energy) {
    std::vector<std::string> kinds;
    for (const scenarios::DeviceGroup& g : cluster.groups) kinds.push_back(g.device);
    OMNI_RETURN_IF_ERROR(check_cluster_energy(*options.energy, kinds));
  }
  return Status::ok();
}

}  // namespace

Status check_cluster_simulation(const std::vector<traces::JobSpec>& jobs, const scenarios::DeviceCluster& cluster,
                                const traces::DeviceSpeedTable& speeds, const ClusterSimOptions& options) {
  OMNI_RETURN_IF_ERROR(check_options(jobs, cluster, speeds, options));
  cluster::ClusterSim sim(cluster, speeds, options);
  return sim.prepare(jobs);
}

Result<ClusterSummary> run_cluster_simulation(const std::vector<traces::JobSpec>& jobs,
                                              const scenarios::DeviceCluster& cluster,
                                              const traces::DeviceSpeedTable& speeds,
                                              const ClusterSimOptions& options) {
  OMNI_RETURN_IF_ERROR(check_options(jobs, cluster, speeds, options));
  cluster::ClusterSim sim(cluster, speeds, options);  // prepare() checks the jobs as check_cluster_simulation does
  OMNI_RETURN_IF_ERROR(sim.prepare(jobs));
  return sim.run();
}

}  // namespace omnilearn::sim
