// Scenario: the typed form of a scenario file, shared by the simulator and the testbed. Filled once by the
// parser (scenario_parser.h), validated, then read-only. Plain values: safe to copy between threads.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/units.h"
#include "omnilearn/controller/batch_policy.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policies.h"
#include "omnilearn/scenarios/energy_spec.h"

namespace omnilearn::scenarios {

// How the workers are connected. kStar: each worker's own link into one shared backbone (the default). kFatTree,
// kTorus, kDragonfly: SimGrid's cluster zones with the parameters of NetworkSpec. kPlatformFile: a SimGrid platform
// file (PlatformFileSpec).
enum class Topology { kStar, kFatTree, kTorus, kDragonfly, kPlatformFile };

// The parameters of a fat-tree, torus or dragonfly (SimGrid's FatTreeParams, torus dimensions, DragonflyParams).
// Every link of the fabric has `bandwidth_Bps` and `latency_s`; a worker is one leaf (its NodeSpec link is not
// used); leaves beyond the workers hold the parameter server, then routers.
struct NetworkSpec {
  std::int64_t levels = 0;                  // fat-tree: switch levels above the leaves
  std::vector<std::int64_t> down;           // fat-tree, per level: children of a switch
  std::vector<std::int64_t> up;             // fat-tree, per level: parents of an element below it
  std::vector<std::int64_t> link_count;     // fat-tree, per level: parallel links between two elements
  std::vector<std::int64_t> dimensions;     // torus: elements along each dimension
  std::vector<std::int64_t> groups;         // dragonfly: {groups, links between two groups}
  std::vector<std::int64_t> chassis;        // dragonfly: {chassis per group, links between two chassis}
  std::vector<std::int64_t> routers;        // dragonfly: {routers per chassis, links between two routers}
  std::int64_t nodes = 0;                   // dragonfly: nodes per router
  double bandwidth_Bps = 1.25e10;
  double latency_s = 1e-6;
};

// A SimGrid platform file as the cluster's network and hosts. Worker k runs on hosts[k]; an empty list means all the
// file's hosts sorted by name. The parameter server runs on `parameter_server`, or else the first host (by name) that
// no worker uses. Each worker's host must compute at the worker's speed.
struct PlatformFileSpec {
  std::string path;                 // resolved relative to the scenario file
  std::vector<std::string> hosts;
  std::string parameter_server;
};

// One worker's machine. Speed is peak flop/s of the whole worker (cores x per-core speed).
struct NodeSpec {
  std::string name;
  double speed_flops = 1e9;
  int cores = 1;
  bool gpu = false;
  double bandwidth_Bps = 1.25e9;  // its link to the network, bytes per second
  double latency_s = 1e-5;
};

struct ClusterSpec {
  std::string preset;              // "edge", "cloud", "hpc", or "" for an explicit list
  Topology topology = Topology::kStar;
  std::vector<NodeSpec> workers;   // one entry per worker, after expanding counts, presets or a platform's hosts
  NodeSpec parameter_server;       // used in ASP
  double backbone_bandwidth_Bps = 1.25e10;  // the switch / fabric
  double backbone_latency_s = 1e-6;
  NetworkSpec network;              // kFatTree, kTorus, kDragonfly
  PlatformFileSpec platform;        // kPlatformFile
};

// The all-reduce algorithm of a BSP step (sim/src/collective_model.h describes each).
enum class AllreduceAlgorithm { kRing, kHierarchicalRing, kDoubleBinaryTree, kHalvingDoubling, kParameterServer };

// How BSP workers reduce their gradients, and how much of it overlaps the backward pass.
struct AllreduceSpec {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::kRing;
  std::int64_t chunks = 0;            // double-binary-tree pipeline chunks; 0: the count that minimises its time
  std::int64_t shards = 1;            // parameter-server: shards, on evenly spaced workers
  std::int64_t workers_per_node = 1;  // hierarchical-ring: workers k with the same k / workers_per_node share a node
  // DDP gradient buckets: the backward pass releases them in turn and each one's all-reduce overlaps what remains of
  // it. 1 (the default): one all-reduce after the whole compute. bucket_bytes > 0 sets the bucket size instead.
  std::int64_t buckets = 1;
  double bucket_bytes = 0.0;
};

// What one iteration costs: compute c0 + c1 * b flop, and the gradient to exchange.
struct ModelProfile {
  std::string name;                 // "resnet18", ... or the profile file's name
  double parameters = 0.0;
  double gradient_bytes = 0.0;      // 4 bytes per parameter unless the profile says otherwise
  double flops_per_sample = 0.0;    // c1: forward + backward
  double flops_per_iteration = 0.0; // c0: fixed per-iteration cost
  // Optional measured law (from `omnilearn calibrate`): compute seconds at full speed = a + c * b.
  std::optional<double> measured_fixed_s;
  std::optional<double> measured_per_sample_s;
  // The backward pass's share of the per-sample compute (forward 1x, backward 2x: 2/3); the gradient is split into
  // equal buckets released at even intervals of it (a uniform-layers model). Used only with gradient buckets.
  double backward_fraction = 2.0 / 3.0;

  // Optional terms of a CPU testbed whose workers run under cgroup CPU quotas (`omnilearn validate` writes them
  // from `omnilearn calibrate`'s measurements and the testbed run's shares). All default to "absent".
  // The scenario speed (flop/s) that stands for one full core of the host where the measured law was taken: a
  // worker of speed S then runs at CPU share s = S / host_core_flops and computes the measured law times
  // slowdown(s). Requires the measured law. Absent: every worker computes the measured law as is.
  std::optional<double> host_core_flops;
  // slowdown(s) = compute time at CPU share s / time at a full core, measured at `slowdown_shares` (ascending, in
  // (0, 1]); piecewise-linear between them, proportional to 1/s beyond either end. Empty: slowdown(s) = 1/s.
  std::vector<double> slowdown_shares;
  std::vector<double> slowdown_factors;
  // Per BSP all-reduce: a fixed cost in seconds (e.g. the collective's round trips on loopback), and the CPU quota
  // period: each of the 2(P-1) ring steps waits for its most throttled participant (share s < 1) to get CPU again,
  // (1 - s) / 2 of the period on average; and a worker held back by its own quota computes each step as a burst
  // that starts with its quota unused (sim: quota_burst_seconds). 0: none.
  double allreduce_fixed_s = 0.0;
  double quota_period_s = 0.0;
  // Whether the quota also holds the all-reduce (testbed `emulator.throttle: process`); false (`compute`): the
  // communication threads run unthrottled, so only one wait per all-reduce remains (the training thread's).
  bool quota_holds_comm = true;
  // Per-step compute-time variation measured on a testbed (coefficient of variation, >= 0). > 0: each step's
  // compute is multiplied by a log-normal factor of mean 1 and this CV from the seeded generator, in place of the
  // modelled quota-phase jitter (the measurement includes it). 0: none.
  double compute_jitter_cv = 0.0;
  // The part of that variance (in [0, 1]) shared by all workers in a step (the host's noise): that part of the
  // factor's log-variance comes from one normal draw per step common to all workers, the rest from each worker's.
  double compute_jitter_shared = 0.0;
  // Per-step compute noise that depends on the CPU share, not on the step's length (a testbed's: the steps of a
  // worker held to share s vary by about the same seconds whatever its batch). Requires host_core_flops. Each BSP
  // step's compute gets a log-normal factor of mean 1 whose standard deviation in seconds is noise_std_s(s),
  // piecewise-linear between `noise_shares` (ascending, > 0) and constant beyond either end; it replaces
  // compute_jitter_cv, and compute_jitter_shared splits it the same way. Empty: none.
  std::vector<double> noise_shares;
  std::vector<double> noise_std_s;
  // Host cores left to the workers by other load on the host (measured during the testbed run). Requires
  // host_core_flops. When the workers' shares add up to more, CPU is water-filled: each gets min(s_k, L), with L
  // such that the sum is this, and computes at that share. Absent: the host has room for every share.
  std::optional<double> host_cpu_available;
};

// What a simulated iteration computes. kTime: only how long it takes (the cost model). kReal: virtual-time
// training: the simulator decides when each iteration happens and a real LibTorch model (the testbed's network and
// data, `emulator:` settings) computes it, so the run also has losses, evaluations and a time to target accuracy.
enum class Numerics { kTime, kReal };

// ASP's algorithm (workload.asp; docs/asp-rules.md writes each rule's update in one line). `update`: what a worker
// pushes: its gradient, which the server applies by `rule` (kGradient), or its whole parameter vector after a local
// SGD step on its own copy, which replaces the server's (kModelOverwrite: the last writer wins, as the OmniLearn
// paper's code). `pull`: when a worker takes the server's parameters: with every push's reply (kEveryPush), or only
// at an epoch's end (kPerEpoch: between pulls it trains on its own copy; at the end of each epoch the server holds
// every reply until all live workers have pushed, then makes the batch decision and sends each the parameters).
enum class AspUpdate { kGradient, kModelOverwrite };
enum class AspPull { kEveryPush, kPerEpoch };
// How pull: per-epoch's server counts epochs for its barrier: floor(samples / epoch) (an epoch's barrier after its
// last push), or ceil, as the OmniLearn paper's server does (a barrier after the first push of each epoch, the
// first one after the run's first push). Data epochs (records, evaluations, the stop rule) count with floor either way.
enum class AspEpochs { kFloor, kCeil };
// The server's rule for a pushed gradient g of worker k, τ updates stale: plain ASGD; the step divided by max(1, τ)
// (Zhang et al. 2016); DC-ASGD's compensation g + λ g⊙g⊙(w − w_k) with w_k what k pulled (Zheng et al. 2017);
// SSP: ASGD, and a worker may not start iteration c + s + 1 before every live worker finished c (Ho et al. 2013);
// Ringmaster: ASGD that drops a gradient with τ > R (Maranjyan, Tyurin & Richtárik 2025); Rescaled: the step times
// t_k / mean t (k's compute time over the mean of every worker's latest); staleness-bounded: nothing dropped, the
// step times (b_k / b_ref) min(1, R / τ), with the batch policy of that name sizing each worker's batch so that τ <= R.
enum class AspRule { kAsgd, kStalenessAware, kDcAsgd, kSsp, kRingmaster, kRescaled, kStalenessBounded };

struct AspSpec {
  AspUpdate update = AspUpdate::kGradient;
  AspPull pull = AspPull::kEveryPush;
  AspEpochs epochs = AspEpochs::kFloor;  // per-epoch only
  AspRule rule = AspRule::kAsgd;
  std::int64_t staleness_bound = 0;  // ssp: s
  std::int64_t delay_threshold = 0;  // ringmaster: R (kNoDelayThreshold, written `inf`: nothing is dropped);
                                     // staleness-bounded: R >= 1, the bound its batches and step are sized for
  double dc_lambda = 0.04;           // dc-asgd: λ (Zheng et al.'s λ0)

  // True for the defaults (gradient, every-push, asgd): the ASP that ran before these keys existed.
  bool is_default() const {
    return update == AspUpdate::kGradient && pull == AspPull::kEveryPush && rule == AspRule::kAsgd &&
           epochs == AspEpochs::kFloor;
  }
  // Whether the server applies a gradient pushed `staleness` updates after its worker pulled (Ringmaster drops it
  // when staleness > R; every other rule applies all).
  bool applies(std::int64_t staleness) const {
    return rule != AspRule::kRingmaster || staleness <= delay_threshold;
  }
};
inline constexpr std::int64_t kNoDelayThreshold = std::numeric_limits<std::int64_t>::max();

// How ASP workers' training data are split (virtual-time training and the testbed; time-only runs ignore it):
// every worker samples the whole training set in its own seeded order (iid), or holds only its shards of the set
// sorted by label (sorted-shards: n x shards_per_worker equal shards, worker k holding shards k, k + n, k + 2n, ...;
// McMahan et al. 2017's pathological non-IID split), and samples those alone.
enum class PartitionKind { kIid, kSortedShards };

struct PartitionSpec {
  PartitionKind kind = PartitionKind::kIid;
  std::int64_t shards_per_worker = 1;  // sorted-shards only
};

struct WorkloadSpec {
  ModelProfile model;
  std::string dataset = "cifar10";
  std::int64_t dataset_samples = 50000;
  BatchSize global_batch = 128;
  std::int64_t epochs = 1;
  AllreduceSpec allreduce;
  std::int64_t sample_budget = 0;   // 0: train `epochs` epochs; else stop after this many samples (the parser
                                    // then sets `epochs` to the epochs the budget reaches into, rounded up)
  Numerics numerics = Numerics::kTime;  // `omnilearn sim` only; kReal needs an omnilearn built with LibTorch
  AspSpec asp;                      // ASP only
  PartitionSpec partition;          // ASP only
};

struct PolicySpec {
  std::string name = "uniform";     // validated against controller::make_default_registry()
  double gain = 1.0;                // the law's gain (controller::PolicyOptions::gain)
  std::size_t fit_window = 8;       // affine: observations per worker in the fit
  BatchSize min_batch = 16;         // per-worker bounds
  BatchSize max_batch = 96;
  // The controller's own defaults (ControllerOptions documents each).
  double dead_band = controller::ControllerOptions{}.dead_band;
  double ewma_alpha = controller::ControllerOptions{}.ewma_alpha;
  controller::DecisionTrigger trigger = controller::ControllerOptions{}.trigger;
  std::int64_t every_n = controller::ControllerOptions{}.every_n;
  double imbalance_threshold = controller::ControllerOptions{}.imbalance_threshold;
  bool memory_guard = controller::ControllerOptions{}.memory_guard;
  double memory_guard_tolerance = controller::ControllerOptions{}.memory_guard_tolerance;
};

// When availability levels change: at simulated/real times, or at epoch boundaries.
enum class ScheduleUnit { kSeconds, kEpochs };

// A step of a static schedule: from `at` on, worker k runs at fractions[k] of its nominal speed.
struct AvailabilityPhase {
  double at = 0.0;
  std::vector<double> fractions;
};

struct TraceReference {
  std::string path;                 // resolved relative to the scenario file
  std::vector<std::string> nodes;   // trace worker names for workers 0..N-1; empty: round-robin
  double time_scale = 1.0;          // trace seconds are multiplied by this
  double window_start_s = 0.0;      // clip [start, end) of the trace before scaling; end 0 = to the end
  double window_end_s = 0.0;
};

enum class GeneratorKind { kMarkov, kRandomWalk, kDiurnal };  // markov | random-walk | diurnal

struct GeneratorSpec {
  GeneratorKind kind = GeneratorKind::kMarkov;
  double mtbf_s = 3600.0;
  double mttr_s = 300.0;
  double step_s = 60.0;
  double low = 0.2;
  double high = 1.0;
  double period_s = 86400.0;
  double amplitude = 0.3;
  double duration_s = 86400.0;
};

struct AvailabilitySpec {
  enum class Kind { kNone, kSchedule, kTrace, kGenerator };
  Kind kind = Kind::kNone;
  ScheduleUnit unit = ScheduleUnit::kEpochs;
  std::vector<AvailabilityPhase> phases;  // kSchedule: sorted by `at`, first at 0
  TraceReference trace;                   // kTrace
  GeneratorSpec generator;                // kGenerator
  // Applied on top of any kind: a noise trace whose fractions multiply the levels (0 still means down).
  std::optional<TraceReference> noise;
};

struct OutputSpec {
  std::string dir = "runs";         // run folders go to <dir>/<scenario name>
  bool timeline = true;             // write timeline.json
};

// The testbed's network: a LeNet-sized CNN (~22k parameters), a small ResNet, or the user's TorchScript module
// (emulator.model_file); kFromModel (the file's default): the user's module when model_file is set, else from the
// model profile's name (lenet... or resnet...).
enum class Network { kFromModel, kLeNet, kResNet, kTorchScript };
// The training loss of the network's output against integer class labels: cross-entropy of logits, or the negative
// log-likelihood of log-probabilities (a module that ends in log_softmax).
enum class Loss { kCrossEntropy, kNll };
enum class Device { kCpu, kCuda };
// How ASP's learning-rate scaling (emulator.lr_scaling) grows with a push's batch.
enum class LrScalingRule { kLinear, kSqrt };
// What a worker's CPU quota holds: its compute threads only (its communication threads run unthrottled, as on a node
// with fewer cores; cgroup v1), or the whole process, communication included.
enum class QuotaScope { kCompute, kProcess };

// Settings of the real testbed (`omnilearn emulate`, emulator/): the one home of each, with its default. The
// simulator ignores them. `--set emulator.<key>=<value>` overrides any of them.
struct EmulatorSpec {
  Network network = Network::kFromModel;
  Device device = Device::kCpu;      // kCuda: each worker gets an MPS share of the GPU (emulator/README.md)
  double cpu_budget = 1.5;           // host cores for the scenario's busiest moment (its cores are scaled onto them)
  double cpu_per_core = 0.0;         // > 0: host cores per scenario core, instead of cpu_budget
  double cpu_period_s = 0.010;       // CFS period of the workers' CPU quotas (10 ms beats 100 ms)
  QuotaScope throttle = QuotaScope::kCompute;
  std::string cpuset;                // pin every worker to these CPUs ("" = no pinning)
  // CPU seconds that each training sample costs the emulated model (0: the network's own cost on this host). The
  // worker computes the real forward and backward pass, then keeps computing (forward passes on the same batch)
  // until its CPU time for the step reaches batch x sample_cost_s: a step costs the same CPU time on every host,
  // and a worker held to s cores computes at exactly s of its free speed.
  double sample_cost_s = 0.0;
  double target_accuracy = 0.85;     // stop at this test accuracy (0: no target)
  std::int64_t eval_every = 0;       // evaluate every this many steps (0: once per epoch)
  std::int64_t eval_samples = 10000; // test samples per evaluation
  double time_budget_s = 0.0;        // stop after this much training time (0: none)
  double learning_rate = 0.05;
  double momentum = 0.9;
  bool lr_scaling = false;           // ASP: the server applies worker k's push with rate η b_k / b_ref (b_ref = B / n)
  LrScalingRule lr_scaling_rule = LrScalingRule::kLinear;  // with lr_scaling: η b_k / b_ref, or η sqrt(b_k / b_ref)
  // Learning-rate warm-up: the rate rises linearly to learning_rate over the first this many updates (BSP steps,
  // ASP applied pushes). 0: none.
  std::int64_t warmup_updates = 0;
  // Liveness: a worker that reports no iteration for this long stops the run, named (0: never). Gloo's collective
  // timeout follows it (emulator::gloo_timeout_s).
  double stall_timeout_s = 30.0;
  double stop_grace_s = 2.0;         // SIGTERM, then SIGKILL after this long, when a run is stopped
  std::string data_source = "/usr/share/datasets/fashion-mnist";  // the Debian package's files
  std::string cache_dir;             // decompressed copy; "": $XDG_CACHE_HOME or ~/.cache, + /omnilearn/fashion-mnist
  // Your own model and data (emulator/README.md "Your own model and data"). model_file: a TorchScript module
  // (torch.jit.script or trace, then .save) whose forward takes a batch [b, *input_shape] and returns one row of
  // class scores per sample, trained with `loss`. train_data / test_data: tensor files (torch.save of a dict with
  // "inputs", float [n, *input_shape], and "labels", int64 [n]) instead of Fashion-MNIST. Relative paths are
  // relative to the scenario file.
  std::string model_file;
  std::vector<std::int64_t> input_shape = {1, 28, 28};
  Loss loss = Loss::kCrossEntropy;
  std::string train_data;
  std::string test_data;
};

struct Scenario {
  std::string name;                 // from the file name unless given
  std::string source_path;          // the file it came from
  ClusterSpec cluster;
  WorkloadSpec workload;
  controller::TrainingMode mode = controller::TrainingMode::kBsp;
  PolicySpec policy;
  AvailabilitySpec availability;
  std::uint64_t seed = 1;
  OutputSpec outputs;
  EmulatorSpec emulator;
  std::int64_t max_iterations = 0;  // 0: no cap (a safety stop for huge runs)
  std::optional<EnergySpec> energy;  // `energy:` present: energy is reported (docs/energy.md)

  std::size_t worker_count() const { return cluster.workers.size(); }
  // A path from the scenario (a trace, a model or data file): as given when it exists or is absolute, else relative
  // to the scenario file's folder.
  std::string resolve_path(const std::string& path) const;
  // Controller options for this scenario (bounds per worker, nominal capacity = node speed).
  controller::ControllerOptions controller_options() const;
};

}  // namespace omnilearn::scenarios
