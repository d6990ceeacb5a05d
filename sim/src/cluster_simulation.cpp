#include "omnilearn/sim/cluster_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
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

#include "cluster_jobs_table.h"
#include "collective_model.h"
#include "finish_time_fairness.h"
#include "pollux_job_hooks.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/run/asp_schedule.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/run/jobs_run_folder.h"
#include "omnilearn/scenarios/jobs_scenario.h"
#include "omnilearn/scenarios/model_catalog.h"
#include "omnilearn/scheduler/scheduler_registry.h"
#include "omnilearn/sim/simulation.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::sim {
namespace {

namespace sg4 = simgrid::s4u;
using traces::shortest_number;

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

// One job as the simulation runs it.
struct Job {
  const traces::JobSpec* spec = nullptr;
  std::size_t index = 0;
  double total_samples = 0.0;
  double gradient_bytes = 0.0;
  std::map<std::string, double> throughput;  // one worker's samples/s per kind, at the job's per-worker batch
  std::vector<traces::SpeedCurve> curves;     // the model's speeds by kind index (facts_.kinds()), resolved once
  std::vector<std::size_t> worker_kinds;      // the kind index of each worker the job's actor steps now
  scenarios::AspSpec asp;                     // an ASP job's server rule (its asp_rule)
  std::int64_t dropped_pushes = 0;            // ASP pushes its rule dropped (Ringmaster)
  JobOutcome outcome;
  bool arrived = false;
  Seconds waiting_since_s = 0.0;
  std::vector<scheduler::DeviceSlot> slots;  // held now (sorted)
  std::uint64_t generation = 0;              // bumped at every change of `slots`
  Seconds resume_at_s = 0.0;                 // restart cost: no step before this
  Seconds held_since_s = 0.0;                // when it got `slots`, for its device time
  bool running_actor = false;
  std::string packing_key;  // with packing: model/batch of a one-worker job (the packed table's key); else empty
  // Packing: the job sharing this job's device and the fraction of its speed alone it keeps, from the round that
  // packs them until the round after the partner leaves; "" and 1 otherwise.
  std::string packed_with;
  double packed_fraction = 1.0;
  std::map<std::string, double> packed_device_s;  // the part of outcome.device_s spent packed, by kind
  // Steady stepping (several workers): the last two steps took the same time with the same plan. Reset when the
  // job's devices change.
  Seconds last_step_s = 0.0;
  int steady_steps = 0;
  std::vector<sg4::ActivityPtr> in_flight;   // the step's activities, cancelled when the job loses its devices
  // The job's timeline: what it did from when to when ("waiting", "restoring", "running on 4 v100").
  struct Segment {
    Seconds start_s;
    Seconds end_s;
    std::string what;
  };
  std::vector<Segment> segments;
  Seconds segment_start_s = 0.0;
  std::string segment;  // the open one; empty before arrival and after the end
  // Closes the open segment at now_s and opens `what` (nothing: "") there. A segment may be opened in the future (the
  // end of a restart); one entered before it began never happened, and those before are clipped to now_s.
  void enter(Seconds now_s, std::string what) {
    if (!segment.empty() && now_s > segment_start_s) segments.push_back({segment_start_s, now_s, segment});
    while (!segments.empty() && segments.back().end_s > now_s) {
      if (segments.back().start_s >= now_s) {
        segments.pop_back();
      } else {
        segments.back().end_s = now_s;
      }
    }
    segment = std::move(what);
    segment_start_s = now_s;
  }
};

struct Host {
  sg4::Host* host = nullptr;
  std::string kind;
  std::size_t kind_index = 0;  // in facts_.kinds()
  int jobs = 0;                // jobs holding a device here now
  int talkers = 0;             // those of them whose workers span several nodes (their flows use this node's link)
};

// One worker's samples/s at `batch` on the kind of index `kind`, from the job's resolved curves (the table's
// speed(); its error for a batch below 1).
Result<double> worker_speed(const Job& job, std::size_t kind, BatchSize batch) {
  if (batch < 1) return Status::invalid_argument("batch " + std::to_string(batch) + ": expected >= 1");
  return job.curves[kind].samples_per_s(batch);
}

class ClusterSim {
 public:
  ClusterSim(const scenarios::DeviceCluster& cluster, const traces::DeviceSpeedTable& speeds,
             const ClusterSimOptions& options)
      : cluster_(cluster), speeds_(speeds), options_(options) {}

  Status prepare(const std::vector<traces::JobSpec>& specs);
  Result<ClusterSummary> run();

 private:
  void build_platform();
  void scheduler_actor();
  // The jobs present at now_s (present_): those arrived by then join, in index order; those finished leave.
  void update_present(Seconds now_s);
  Status decide(Seconds now_s);
  void job_actor(std::size_t j);
  Status step(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
              const std::vector<std::string>& kinds, std::int64_t& step_index, bool& interrupted);
  // ASP: each worker computes, pushes its gradient to the parameter server (on the node of the job's first device)
  // and pulls the parameters back with its next batch, until the job's samples are done or its devices are taken.
  Status asp_steps(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                   std::int64_t& step_index, bool& interrupted);
  Status solo_steps(Job& job, BatchSize batch, sg4::Host* host, std::int64_t& step_index, bool& interrupted);
  // Runs `step_s`-long steps of `batch` samples up to the next round (or the job's end; at least one) as one
  // execution on `host`, a preemption keeping the completed ones; false, running none, when fewer than
  // `min_steps` fit.
  bool run_steps(Job& job, Seconds step_s, BatchSize batch, sg4::Host* host, std::int64_t min_steps,
                 std::int64_t& step_index, bool& interrupted);
  // Whether `job`'s next steps up to the round take what its last one took (run as one execution): its last steps
  // were steady, and either no other job holds a device on its nodes, or its batches never change (uniform) and no
  // other job's flows can meet its own (each worker computes on its own device; flows meet only on the nodes' links):
  // it has no flows (one node), or no other job with flows (spanning several nodes) holds a device on its nodes. A
  // job whose controller may still move its batches keeps stepping beside others, where the controller sees them.
  bool steps_repeat(const Job& job) const;
  void release(Job& job, Seconds now_s);
  // Gives `job` the devices `slots` (empty: none), keeping each host's count of jobs on it.
  void set_slots(Job& job, std::vector<scheduler::DeviceSlot> slots);
  // Energy: every device of `job` busy at its batch from t0 to now (a solo job's or an ASP job's steps, a step cut by a
  // preemption). Nothing without options.energy.
  void charge_busy(const Job& job, const std::vector<std::string>& kinds, const std::vector<BatchSize>& batches,
                   Seconds t0);
  ClusterSummary summarise(Seconds end_s) const;
  Status write(const ClusterSummary& summary) const;

  const scenarios::DeviceCluster& cluster_;
  const traces::DeviceSpeedTable& speeds_;
  const ClusterSimOptions& options_;
  std::unique_ptr<scheduler::SchedulingPolicy> policy_;
  scheduler::ClusterFacts facts_;
  std::vector<Host> hosts_;
  std::vector<Job> jobs_;
  std::vector<std::size_t> by_arrival_;  // job indices by arrival time (stable: file order among equals)
  std::size_t arrived_ = 0;              // how many of by_arrival_ have arrived
  std::vector<std::size_t> present_;     // arrived and not finished when the last round began, by index
  sg4::ConditionVariablePtr changed_;  // a job's slots changed, or the run ended
  sg4::MutexPtr mutex_;
  std::size_t done_ = 0;
  bool over_ = false;
  Status status_;
  std::string allocations_csv_;
  std::int64_t rounds_ = 0;
  std::vector<scheduler::PackedPairFacts> packed_pairs_;
  Seconds end_s_ = 0.0;
  Seconds next_round_s_ = 0.0;  // when the scheduler decides next
  std::optional<ClusterEnergyMeter> energy_;  // with options.energy
};

// The share of its device a job's worker is charged: half when packed with another job.
double energy_share(const Job& job) { return job.packed_with.empty() ? 1.0 : 0.5; }

Status ClusterSim::prepare(const std::vector<traces::JobSpec>& specs) {
  auto policy = scheduler::make_default_scheduler_registry().make(options_.scheduler, options_.scheduling);
  if (!policy.is_ok()) return policy.status();
  policy_ = std::move(policy).value();
  const bool packing = options_.scheduling.packing;
  if (packing && options_.packed_speeds == nullptr) {
    return Status::invalid_argument("packing needs the packed-pair table (--packed-speeds)");
  }
  if (policy_->packs_devices() && !packing) {
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
  std::map<std::string, std::vector<traces::SpeedCurve>> curves_of_model;  // each model's curves, resolved once
  jobs_.resize(specs.size());
  by_arrival_.resize(specs.size());
  for (std::size_t j = 0; j < specs.size(); ++j) by_arrival_[j] = j;
  std::stable_sort(by_arrival_.begin(), by_arrival_.end(),
                   [&](std::size_t a, std::size_t b) { return specs[a].arrival_s < specs[b].arrival_s; });
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const traces::JobSpec& s = specs[j];
    Job& job = jobs_[j];
    job.spec = &s;
    job.index = j;
    job.outcome.name = s.name;
    job.outcome.arrival_s = s.arrival_s;
    const std::string where = "job '" + s.name + "'";
    if (s.epochs <= 0.0 && options_.metric_curves == nullptr) {
      return Status::invalid_argument(where + ": no epochs, and no measured metric curves to say when its target "
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
      spec.options.workers.assign(static_cast<std::size_t>(s.workers),
                                  controller::WorkerSpec{1, s.global_batch, 1.0});
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
    auto known = curves_of_model.find(s.model);
    if (known == curves_of_model.end()) {
      std::vector<traces::SpeedCurve> curves;
      for (const std::string& kind : kinds) {
        auto curve = speeds_.curve(s.model, kind);
        if (!curve.is_ok()) return Status::invalid_argument(where + ": " + curve.status().message());
        curves.push_back(std::move(curve).value());
      }
      known = curves_of_model.emplace(s.model, std::move(curves)).first;
    }
    job.curves = known->second;
    for (std::size_t k = 0; k < kinds.size(); ++k) job.throughput[kinds[k]] = job.curves[k].samples_per_s(per_worker);
    for (const std::string& kind : kinds) job.outcome.device_s[kind] = 0.0;
  }
  if (packing) {
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
  if (options_.energy) energy_.emplace(*options_.energy, jobs_.size());
  return Status::ok();
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
      const auto kind = static_cast<std::size_t>(std::lower_bound(kinds.begin(), kinds.end(), g.device) - kinds.begin());
      hosts_.push_back({host, g.device, kind});
    }
  }
  zone->seal();
}

// summary.json's energy block (docs/energy.md, "Several jobs").
nlohmann::ordered_json energy_json(const ClusterEnergy& e) {
  nlohmann::ordered_json j;
  j["total_j"] = e.total_j;
  j["jobs_j"] = e.jobs_j;
  j["unallocated_idle_j"] = e.unallocated_idle_j;
  j["average_power_w"] = e.average_power_w;
  double compute = 0.0, comm = 0.0, wait = 0.0, idle = 0.0;
  for (const JobEnergy& job : e.jobs) {
    compute += job.compute_j;
    comm += job.comm_j;
    wait += job.wait_j;
    idle += job.idle_j;
  }
  j["compute_j"] = compute;
  j["comm_j"] = comm;
  j["wait_j"] = wait;
  j["held_idle_j"] = idle;
  j["wait"] = e.wait;
  j["comm"] = e.comm;
  for (const auto& [kind, k] : e.kinds) {
    j["kinds"][kind] = {{"jobs_j", k.jobs_j},
                        {"unallocated_idle_j", k.unallocated_idle_j},
                        {"unallocated_device_s", k.unallocated_device_s},
                        {"idle_w", k.idle_w}};
  }
  return j;
}

void cancel_step(Job& job) {
  // A copy: each cancel is a simcall, during which the job's actor may wake and clear its list. Only what still
  // runs: a finished activity has left SimGrid's kernel.
  const std::vector<sg4::ActivityPtr> running = job.in_flight;
  for (const sg4::ActivityPtr& act : running) {
    if (act->get_state() == sg4::Activity::State::STARTED) act->cancel();
  }
}

// Whether the job's devices were taken (the scheduler moved it on since `generation`, or the run is over): then
// cancels what it has running, forgets it, and marks the step `interrupted`.
bool devices_taken(Job& job, std::uint64_t generation, bool over, bool& interrupted) {
  if (!over && job.generation == generation) return false;
  interrupted = true;
  cancel_step(job);
  job.in_flight.clear();
  return true;
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

void ClusterSim::update_present(Seconds now_s) {
  std::vector<std::size_t> arrivals;
  while (arrived_ < by_arrival_.size() && jobs_[by_arrival_[arrived_]].spec->arrival_s <= now_s) {
    Job& job = jobs_[by_arrival_[arrived_++]];
    job.arrived = true;
    job.waiting_since_s = job.spec->arrival_s;
    job.enter(job.spec->arrival_s, "waiting");
    arrivals.push_back(job.index);
  }
  std::erase_if(present_, [&](std::size_t j) { return jobs_[j].outcome.finished(); });
  std::sort(arrivals.begin(), arrivals.end());
  const std::size_t before = present_.size();
  present_.insert(present_.end(), arrivals.begin(), arrivals.end());
  std::inplace_merge(present_.begin(), present_.begin() + static_cast<std::ptrdiff_t>(before), present_.end());
}

Status ClusterSim::decide(Seconds now_s) {
  scheduler::RoundFacts facts;
  facts.now_s = now_s;
  facts.cluster = facts_;
  facts.packed_pairs = packed_pairs_;
  update_present(now_s);
  const std::vector<std::size_t>& present = present_;
  for (const std::size_t j : present) {
    Job& job = jobs_[j];
    release(job, now_s);  // brings its device time up to now
    scheduler::JobFacts f;
    f.id = job.spec->name;
    f.arrival_s = job.spec->arrival_s;
    f.min_workers = static_cast<int>(job.spec->min_workers);
    f.max_workers = static_cast<int>(job.spec->max_workers);
    f.remaining_samples = std::max(0.0, job.total_samples - job.outcome.samples);
    f.throughput_per_worker = job.throughput;
    f.balances_batches = job.spec->batch_policy != "uniform";
    f.current = job.slots;
    f.service_by_kind = job.outcome.device_s;
    f.packed_service_by_kind = job.packed_device_s;
    f.waiting_s = job.slots.empty() ? now_s - job.waiting_since_s : 0.0;
    f.packing_key = job.packing_key;
    facts.jobs.push_back(std::move(f));
  }
  if (facts.jobs.empty()) return Status::ok();
  auto allocation = policy_->decide(facts);
  if (!allocation.is_ok()) return allocation.status();
  // Packed pairs: the two jobs given one device, and the fraction each keeps (the scheduler packed only measured
  // pairs, so the lookup answers).
  std::map<scheduler::DeviceSlot, std::vector<std::size_t>> sharing;
  for (std::size_t i = 0; i < present.size(); ++i) {
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
    std::map<std::string, int> by_kind;
    for (const scheduler::DeviceSlot& s : a.slots) ++by_kind[hosts_[s.host].kind];
    for (const auto& [kind, n] : by_kind) {
      allocations_csv_ += run::allocations_csv_row(
          now_s, job.spec->name, kind, n,
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
  changed_->notify_all();
  return Status::ok();
}

void ClusterSim::scheduler_actor() {
  const Seconds round_s = options_.scheduling.round_s;
  while (true) {
    // The job actors that SimGrid wakes at this instant (a last step ending on the round) record it first.
    sg4::this_actor::yield();
    const Seconds now_s = sg4::Engine::get_clock();
    if (options_.stop_requested && options_.stop_requested()) {
      status_ = Status::internal("stopped on request at " + shortest_number(now_s) + " s (simulated)");
      break;
    }
    if (options_.max_time_s > 0.0 && now_s >= options_.max_time_s) break;
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
    Seconds next_s = now_s + round_s;
    const bool any_present =
        std::any_of(present_.begin(), present_.end(), [&](std::size_t j) { return !jobs_[j].outcome.finished(); });
    const Seconds next_arrival_s = arrived_ < by_arrival_.size() ? jobs_[by_arrival_[arrived_]].spec->arrival_s
                                                                 : std::numeric_limits<double>::infinity();
    if (!any_present && next_arrival_s > next_s) next_s = round_s * std::ceil(next_arrival_s / round_s);
    if (options_.max_time_s > 0.0) next_s = std::min(next_s, options_.max_time_s);
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

Status ClusterSim::step(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                        const std::vector<std::string>& kinds, std::int64_t& step_index, bool& interrupted) {
  const std::size_t n = hosts.size();
  const controller::Plan& plan = ctl.current_plan();
  const Seconds t0 = sg4::Engine::get_clock();
  const std::vector<BatchSize> batches = plan.batch;  // plan_next replaces the plan
  if (options_.measured_steps) {  // Pollux's measured step of the job's placement, steps up to the round as one
    auto step_s = pollux_step_s(*options_.pollux, *job.spec, workers_per_node(hosts));
    if (!step_s.is_ok()) return step_s.status();
    run_steps(job, *step_s, plan.global_batch, hosts[0], 1, step_index, interrupted);
    charge_busy(job, kinds, batches, t0);
    return Status::ok();
  }
  if (job.spec->mode == traces::JobMode::kAsp || n == 1) {
    // Energy: a solo job's steps are compute alone; an ASP job's workers compute or exchange with the server all
    // the time (docs/energy.md).
    const Status st = job.spec->mode == traces::JobMode::kAsp
                          ? asp_steps(job, ctl, hosts, step_index, interrupted)
                          : solo_steps(job, plan.batch[0], hosts[0], step_index, interrupted);
    charge_busy(job, kinds, batches, t0);
    return st;
  }
  // Steady and sharing its links with no other job's flows: nothing can change a step before the next round
  // (allocations change only at rounds; the switch does not saturate), so its steps there take what the last one
  // took, in one execution.
  if (steps_repeat(job) &&
      run_steps(job, job.last_step_s, plan.global_batch, hosts[0], 2, step_index, interrupted)) {
    if (energy_) energy_->repeat_last(job.index, (sg4::Engine::get_clock() - t0) / job.last_step_s);
    return Status::ok();
  }
  // The scheduler cancels what runs when it takes the devices; an activity whose start was still in progress then
  // is caught here, after each start (SimGrid marks it started only when start() returns). A step cut short is
  // charged busy for what it ran.
  const std::uint64_t generation = job.generation;
  const auto taken = [&] {
    if (!devices_taken(job, generation, over_, interrupted)) return false;
    charge_busy(job, kinds, batches, t0);
    return true;
  };
  std::vector<sg4::ExecPtr> execs;
  std::vector<Seconds> compute_s(n, 0.0);
  job.in_flight.clear();
  for (std::size_t k = 0; k < n; ++k) {
    const BatchSize b = plan.batch[k];
    auto speed = worker_speed(job, job.worker_kinds[k], b);
    if (!speed.is_ok()) return speed.status();
    execs.push_back(sg4::Exec::init()->set_flops_amount(static_cast<double>(b) / *speed)->set_host(hosts[k]));
    job.in_flight.push_back(execs.back());
    execs.back()->start();
    if (taken()) return Status::ok();
  }
  try {
    for (std::size_t k = 0; k < n; ++k) {
      execs[k]->wait();
      compute_s[k] = execs[k]->get_finish_time() - t0;
    }
    if (n > 1) {
      // Ring all-reduce, bandwidth-equivalent: each worker sends 2(n-1)/n of the gradient to the next one, all at
      // once (each link carries what the ring's 2(n-1) phases put on it). Workers on one node exchange for free.
      std::vector<sg4::CommPtr> comms;
      const auto bytes = static_cast<std::uint64_t>(ring_allreduce_bytes(static_cast<double>(n), job.gradient_bytes));
      for (std::size_t k = 0; k < n; ++k) {
        sg4::Host* to = hosts[(k + 1) % n];
        if (to == hosts[k]) continue;
        comms.push_back(sg4::Comm::sendto_async(hosts[k], to, bytes));
        job.in_flight.push_back(comms.back());
        if (taken()) return Status::ok();
      }
      sg4::Comm::wait_all(comms);
    }
  } catch (const simgrid::Exception&) {
    // Cancelled by the scheduler: an execution raises CancelException, a flow NetworkFailureException.
    interrupted = true;
    cancel_step(job);  // the rest of the step too: the job no longer holds these devices
  }
  job.in_flight.clear();
  if (interrupted) {
    charge_busy(job, kinds, batches, t0);
    return Status::ok();
  }
  const Seconds t1 = sg4::Engine::get_clock();
  if (energy_) {
    // Each worker computes, waits for the slowest, then all communicate.
    const Seconds slowest_s = *std::max_element(compute_s.begin(), compute_s.end());
    std::vector<Seconds> wait_s(n);
    for (std::size_t k = 0; k < n; ++k) wait_s[k] = slowest_s - compute_s[k];
    energy_->step(job.index, kinds, std::vector<double>(batches.begin(), batches.end()), compute_s, wait_s,
                  t1 - t0 - slowest_s, energy_share(job));
  }
  ++step_index;
  for (std::size_t k = 0; k < n; ++k) {
    OMNI_RETURN_IF_ERROR(ctl.report(controller::IterationDone{static_cast<WorkerId>(k), step_index, t1, compute_s[k],
                                                              plan.batch[k]}));
  }
  job.outcome.samples += static_cast<double>(plan.global_batch);
  ++job.outcome.steps;
  auto next = ctl.plan_next(controller::DecisionPoint{step_index, 0, t1});
  if (!next.is_ok()) return next.status();
  const Seconds took_s = t1 - t0;
  const bool same = next->batch == batches && std::abs(took_s - job.last_step_s) <= 1e-9 * took_s;
  job.steady_steps = same ? job.steady_steps + 1 : 0;
  job.last_step_s = took_s;
  return Status::ok();
}

Status ClusterSim::asp_steps(Job& job, controller::Controller& ctl, const std::vector<sg4::Host*>& hosts,
                             std::int64_t& step_index, bool& interrupted) {
  const std::size_t n = hosts.size();
  sg4::Host* const server = hosts.front();  // the job's first device's node (slots are sorted)
  const auto bytes = static_cast<std::uint64_t>(job.gradient_bytes);
  const std::uint64_t generation = job.generation;
  enum class Phase { kCompute, kPush, kPull };
  struct Worker {
    Phase phase = Phase::kCompute;
    sg4::ActivityPtr activity;  // what it waits for now
    Seconds started_s = 0.0;
    Seconds compute_s = 0.0;
    BatchSize batch = 0;  // of the computation under way, or the one the pull under way carries
    bool held = false;        // its reply waits (SSP's bound): no activity
  };
  std::vector<Worker> w(n);
  // The job's rule (docs/asp-rules.md), with the single-job server's code: AspSpec::applies drops a push too stale
  // (Ringmaster); AspSchedule holds a reply until SSP's bound lets the worker go on. Every worker starts on the
  // parameters as they are now.
  run::AspSchedule schedule(job.asp, n);
  const run::AspSchedule::LiveFn all_live = [](WorkerId) { return true; };
  std::int64_t updates = job.outcome.steps;
  run::AspStaleness staleness(n);  // every worker starts on the parameters as they are now
  for (std::size_t k = 0; k < n; ++k) staleness.pulled(static_cast<WorkerId>(k), updates);
  job.in_flight.clear();
  const auto start = [&](std::size_t k, sg4::ActivityPtr activity) {
    w[k].activity = std::move(activity);
    job.in_flight.push_back(w[k].activity);
  };
  const auto compute = [&](std::size_t k) -> Status {
    const BatchSize b = w[k].batch;
    auto speed = worker_speed(job, job.worker_kinds[k], b);
    if (!speed.is_ok()) return speed.status();
    w[k].phase = Phase::kCompute;
    w[k].started_s = sg4::Engine::get_clock();
    const sg4::ExecPtr exec =
        sg4::Exec::init()
            ->set_flops_amount(static_cast<double>(b) / (*speed * job.packed_fraction))
            ->set_host(hosts[k]);
    start(k, exec);
    exec->start();
    return Status::ok();
  };
  bool finished = false;
  // k pulls the parameters with its next batch (free on the server's node: it computes again at once).
  const auto pull = [&](std::size_t k, BatchSize batch) -> Status {
    w[k].batch = batch;
    staleness.pulled(static_cast<WorkerId>(k), updates);
    if (hosts[k] == server) return compute(k);
    w[k].phase = Phase::kPull;
    start(k, sg4::Comm::sendto_async(server, hosts[k], bytes));
    return Status::ok();
  };
  // The server applies k's push now (an update, unless the rule drops it); the job's controller sees k's compute
  // time and plans; k pulls, now or when the rule releases it.
  const auto apply = [&](std::size_t k) -> Status {
    const Seconds t = sg4::Engine::get_clock();
    if (job.asp.applies(staleness.of(static_cast<WorkerId>(k), updates))) {
      ++updates;
      staleness.applied_own(static_cast<WorkerId>(k));
      ++step_index;
      ++job.outcome.steps;
    } else {
      ++job.dropped_pushes;
    }
    job.outcome.samples += static_cast<double>(w[k].batch);
    OMNI_RETURN_IF_ERROR(
        ctl.report(controller::IterationDone{static_cast<WorkerId>(k), step_index, t, w[k].compute_s, w[k].batch}));
    if (job.outcome.samples >= job.total_samples) {
      finished = true;
      return Status::ok();
    }
    auto next = ctl.plan_next(controller::DecisionPoint{step_index, 0, t});
    if (!next.is_ok()) return next.status();
    if (!schedule.holds()) return pull(k, next->batch[k]);
    schedule.pushed(static_cast<WorkerId>(k), /*epoch_ended=*/false);
    w[k].held = true;
    bool barrier_opened = false;  // never: pulls follow every push
    for (const WorkerId j : schedule.release(all_live, barrier_opened)) {
      w[j].held = false;
      OMNI_RETURN_IF_ERROR(pull(j, ctl.current_plan().batch[j]));
    }
    return Status::ok();
  };
  const auto advance = [&](std::size_t k) -> Status {
    switch (w[k].phase) {
      case Phase::kCompute:
        w[k].compute_s = sg4::Engine::get_clock() - w[k].started_s;
        if (hosts[k] == server) return apply(k);
        w[k].phase = Phase::kPush;
        start(k, sg4::Comm::sendto_async(hosts[k], server, bytes));
        return Status::ok();
      case Phase::kPush:
        return apply(k);
      case Phase::kPull:
        return compute(k);
    }
    return Status::ok();
  };
  const auto taken = [&] { return devices_taken(job, generation, over_, interrupted); };
  for (std::size_t k = 0; k < n; ++k) {
    w[k].batch = ctl.current_plan().batch[k];
    OMNI_RETURN_IF_ERROR(compute(k));
    if (taken()) return Status::ok();
  }
  while (true) {
    std::vector<sg4::ActivityPtr> waiting;
    for (const Worker& x : w) {
      if (!x.held) waiting.push_back(x.activity);
    }
    job.in_flight = waiting;
    try {
      sg4::Activity::wait_any(waiting);
    } catch (const simgrid::Exception&) {
      // Cancelled by the scheduler: computations and pushes not yet applied are lost.
      interrupted = true;
      cancel_step(job);
      job.in_flight.clear();
      return Status::ok();
    }
    // What ended at this instant, in worker order (determinism).
    std::vector<std::size_t> ended;
    for (std::size_t k = 0; k < n; ++k) {
      if (!w[k].held && w[k].activity->get_state() == sg4::Activity::State::FINISHED) ended.push_back(k);
    }
    for (const std::size_t k : ended) {
      OMNI_RETURN_IF_ERROR(advance(k));
      if (finished) {
        cancel_step(job);  // the other workers' computations and flows end with the job
        job.in_flight.clear();
        return Status::ok();
      }
      if (taken()) return Status::ok();
    }
  }
}

bool ClusterSim::steps_repeat(const Job& job) const {
  if (job.steady_steps < 2) return false;
  bool alone = true;
  for (const scheduler::DeviceSlot& s : job.slots) alone = alone && hosts_[s.host].jobs == 1;
  if (alone) return true;
  if (job.spec->batch_policy != "uniform") return false;
  // On one node its workers exchange for free: its steps are its devices' alone, whoever else is on the node.
  if (job.slots.front().host == job.slots.back().host) return true;
  for (const scheduler::DeviceSlot& s : job.slots) {
    if (hosts_[s.host].talkers > 1) return false;
  }
  return true;
}

bool ClusterSim::run_steps(Job& job, Seconds step_s, BatchSize batch, sg4::Host* host, std::int64_t min_steps,
                          std::int64_t& step_index, bool& interrupted) {
  const Seconds t0 = sg4::Engine::get_clock();
  const auto left = static_cast<std::int64_t>(
      std::ceil(std::max(0.0, job.total_samples - job.outcome.samples) / static_cast<double>(batch)));
  std::int64_t m = next_round_s_ > t0 ? static_cast<std::int64_t>((next_round_s_ - t0) / step_s) : 0;
  m = std::max<std::int64_t>(1, std::min(m, left));
  if (m < min_steps) return false;
  const std::uint64_t generation = job.generation;
  const sg4::ExecPtr exec = sg4::Exec::init()->set_flops_amount(static_cast<double>(m) * step_s)->set_host(host);
  job.in_flight.assign(1, exec);
  exec->start();
  std::int64_t done = m;
  try {
    if (over_ || job.generation != generation) {  // taken while it started (see step())
      cancel_step(job);
      throw simgrid::CancelException(XBT_THROW_POINT, "the job's devices were taken");
    }
    exec->wait();
  } catch (const simgrid::Exception&) {
    // A preemption keeps the steps completed by then, as step by step (a relative margin: m may be large).
    interrupted = true;
    const double completed = (sg4::Engine::get_clock() - t0) / step_s;
    done = std::min(m, static_cast<std::int64_t>(completed * (1.0 + 1e-12) + 1e-9));
  }
  job.in_flight.clear();
  step_index += done;
  job.outcome.steps += done;
  job.outcome.samples += static_cast<double>(done * batch);
  return true;
}

Status ClusterSim::solo_steps(Job& job, BatchSize batch, sg4::Host* host, std::int64_t& step_index,
                              bool& interrupted) {
  // One worker: no all-reduce, and its batch is the job's. Its steps until the next round (or the job's end) are
  // one execution of their summed time, which is what they would take one by one: nothing else can change the
  // device's speed before the round.
  auto speed = worker_speed(job, job.worker_kinds[0], batch);
  if (!speed.is_ok()) return speed.status();
  // Packed: the fraction of its speed alone it keeps with its partner, fixed for the steps started now.
  run_steps(job, static_cast<double>(batch) / (*speed * job.packed_fraction), batch, host, 1, step_index,
            interrupted);
  return Status::ok();
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
    if (!interrupted && job.outcome.samples >= job.total_samples) {
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

ClusterSummary ClusterSim::summarise(Seconds end_s) const {
  ClusterSummary s;
  std::vector<double> jcts;
  for (const Job& job : jobs_) {
    s.jobs.push_back(job.outcome);
    if (job.outcome.finished()) {
      jcts.push_back(job.outcome.jct_s());
      s.makespan_s = std::max(s.makespan_s, job.outcome.end_s);
    }
  }
  s.finished = jcts.size();
  if (s.finished < jobs_.size()) s.makespan_s = std::max(s.makespan_s, end_s);
  std::sort(jcts.begin(), jcts.end());
  if (!jcts.empty()) {
    double sum = 0.0;
    for (double v : jcts) sum += v;
    s.mean_jct_s = sum / static_cast<double>(jcts.size());
    const auto at = [&](double q) {  // linear interpolation between order statistics (pandas' default)
      const double pos = q * static_cast<double>(jcts.size() - 1);
      const auto lo = static_cast<std::size_t>(std::floor(pos));
      const std::size_t hi = std::min(lo + 1, jcts.size() - 1);
      return jcts[lo] + (pos - static_cast<double>(lo)) * (jcts[hi] - jcts[lo]);
    };
    s.median_jct_s = at(0.5);
    s.p99_jct_s = at(0.99);
  }
  const std::vector<std::string> kinds = facts_.kinds();
  const std::vector<int> capacity = facts_.capacity_by_kind();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    double held = 0.0;
    for (const Job& job : jobs_) held += job.outcome.device_s.at(kinds[i]);
    s.utilisation[kinds[i]] = s.makespan_s > 0.0 ? held / (capacity[i] * s.makespan_s) : 0.0;
  }
  s.rounds = rounds_;
  std::vector<FairShareJob> fair(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = jobs_[j];
    fair[j].workers = job.spec->workers;
    fair[j].global_batch = job.spec->global_batch;
    fair[j].total_samples = job.total_samples;
    fair[j].gradient_bytes = job.gradient_bytes;
    fair[j].balances_batches = job.spec->batch_policy != "uniform";
    fair[j].throughput = job.throughput;
  }
  add_finish_time_fairness(s, fair, fair_share_kinds(cluster_, options_.node_bandwidth_Bps, options_.node_latency_s),
                           end_s);
  if (energy_) {
    std::map<std::string, int> by_kind;
    for (std::size_t i = 0; i < kinds.size(); ++i) by_kind[kinds[i]] = capacity[i];
    s.energy = energy_->summary(by_kind, s.makespan_s);
  }
  return s;
}

Status ClusterSim::write(const ClusterSummary& summary) const {
  if (options_.output_dir.empty()) return Status::ok();
  const std::vector<std::string> kinds = facts_.kinds();
  std::vector<SimulatedJobFacts> facts;
  for (const Job& j : jobs_) facts.push_back({j.spec, j.dropped_pushes});
  nlohmann::ordered_json js;
  js["kind"] = "jobs";
  js["scheduler"] = options_.scheduler;
  js["round_s"] = options_.scheduling.round_s;
  js["jobs"] = summary.jobs.size();
  js["finished"] = summary.finished;
  js["mean_jct_s"] = summary.mean_jct_s;
  js["median_jct_s"] = summary.median_jct_s;
  js["p99_jct_s"] = summary.p99_jct_s;
  js["makespan_s"] = summary.makespan_s;
  js["utilisation"] = summary.utilisation;
  js["mean_rho"] = summary.mean_rho;
  js["max_rho"] = summary.max_rho;
  const std::vector<int> capacity = facts_.capacity_by_kind();
  for (std::size_t i = 0; i < kinds.size(); ++i) js["devices"][kinds[i]] = capacity[i];
  js["rounds"] = summary.rounds;
  if (summary.energy) js["energy"] = energy_json(*summary.energy);
  if (options_.measured_steps || options_.statistical_efficiency) js["job_model"] = job_model_json(options_);
  // Why the run ended before every job did: the error, a stop request or --max-time; absent when all ended.
  if (!status_.is_ok()) {
    js["stopped"] = status_.message();
  } else if (summary.finished < summary.jobs.size()) {
    js["stopped"] = "max-time " + shortest_number(options_.max_time_s) + " s";
  }
  js["argv"] = options_.argv;
  const run::JobsRunWriter out(options_.output_dir);
  OMNI_RETURN_IF_ERROR(out.write_jobs(simulated_jobs_table(summary, facts, kinds)));
  OMNI_RETURN_IF_ERROR(out.write_allocations(allocations_csv_));
  // Perfetto / chrome://tracing: one track per job (microseconds of simulated time). The events are dumped one by
  // one (what dumping them as one array gives, without holding every event as a JSON value).
  std::string timeline = "{\"traceEvents\":[";
  timeline += nlohmann::json{{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "jobs"}}}}.dump();
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    timeline += ",";
    timeline += nlohmann::json{{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", j},
                               {"args", {{"name", jobs_[j].spec->name}}}}
                    .dump();
    for (const Job::Segment& seg : jobs_[j].segments) {
      timeline += ",";
      timeline += nlohmann::json{{"name", seg.what}, {"ph", "X"},           {"pid", 1},
                                 {"tid", j},         {"ts", seg.start_s * 1e6}, {"dur", (seg.end_s - seg.start_s) * 1e6}}
                      .dump();
    }
  }
  timeline += "]}\n";
  OMNI_RETURN_IF_ERROR(out.write_timeline_text(timeline));
  return out.write_summary(js);
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

}  // namespace

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
    return Status::invalid_argument("node latency: expected seconds >= 0, got " + shortest_number(options.node_latency_s));
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
  ClusterSim sim(cluster, speeds, options);
  return sim.prepare(jobs);
}

Result<ClusterSummary> run_cluster_simulation(const std::vector<traces::JobSpec>& jobs,
                                              const scenarios::DeviceCluster& cluster,
                                              const traces::DeviceSpeedTable& speeds,
                                              const ClusterSimOptions& options) {
  OMNI_RETURN_IF_ERROR(check_options(jobs, cluster, speeds, options));
  ClusterSim sim(cluster, speeds, options);  // prepare() checks the jobs as check_cluster_simulation does
  OMNI_RETURN_IF_ERROR(sim.prepare(jobs));
  return sim.run();
}

}  // namespace omnilearn::sim
