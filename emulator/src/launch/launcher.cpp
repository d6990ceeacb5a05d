#include "omnilearn/emulator/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "omnilearn/base/format.h"
#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/availability_replayer.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/join_secret.h"
#include "omnilearn/emulator/mps_daemon.h"
#include "omnilearn/emulator/names.h"
#include "omnilearn/emulator/testbed_config.h"
#include "omnilearn/emulator/testbed_energy.h"
#include "omnilearn/emulator/worker_protocol.h"
#include "omnilearn/run/energy_meter.h"
#include "omnilearn/run/run_recorder.h"
#include "gpu_launch.h"
#include "launch_support.h"
#include "process_poll.h"
#include "worker_process.h"

namespace omnilearn::emulator {
namespace {

using Clock = std::chrono::steady_clock;
using detail::free_loopback_port;
using detail::testbed_manifest;
using detail::SignalGuard;
using detail::validate_local_cpus;
using detail::validate_nodes;

}  // namespace

WorkerRange node_worker_range(std::size_t workers, int nnodes, int node_rank) {
  const auto n = static_cast<std::size_t>(std::max(nnodes, 1));
  const auto r = static_cast<std::size_t>(std::clamp(node_rank, 0, std::max(nnodes, 1) - 1));
  return {r * workers / n, (r + 1) * workers / n};
}

std::string node_output_dir(const std::string& output_dir, int node_rank) {
  if (node_rank == 0) return output_dir;
  return (std::filesystem::path(output_dir) / ("node" + std::to_string(node_rank))).string();
}

namespace {

// One launch on this node: prepare (checks, dataset, run folder, groups, configuration), start the processes, follow
// them (records, availability, liveness, signals) until they end or fail, stop what still runs, summarise. The
// destructors of the throttler and the MPS daemon remove them however the launch ends.
class Launch {
 public:
  Launch(const scenarios::Scenario& scenario, const LaunchOptions& options)
      : scenario_(scenario), options_(options), nodes_(options.nodes), n_(scenario.worker_count()),
        asp_(scenario.mode == controller::TrainingMode::kAsp), several_(nodes_.nnodes > 1), node0_(nodes_.node_rank == 0),
        mine_(node_worker_range(n_, nodes_.nnodes, nodes_.node_rank)), local_n_(mine_.end - mine_.begin),
        processes_(local_n_ + (asp_ ? 1 : 0)),
        // ASP adds a parameter server process (index n, Gloo rank n) outside the workers' groups; it runs the
        // controller, so it gets the availability notices and reports the stop reason (BSP: rank 0).
        control_(node0_ ? std::optional<std::size_t>(asp_ ? n_ : 0) : std::nullopt),
        run_dir_(node_output_dir(options.output_dir, nodes_.node_rank)),
        env_(options.environment ? options.environment : std::make_shared<HostLaunchEnvironment>()) {
    log_ = options.log ? options.log : [](const std::string& line) { std::cerr << line << "\n"; };
  }

  Status prepare();
  LaunchResult run();

 private:
  bool is_local(std::size_t k) const { return k >= mine_.begin && k < mine_.end; }
  WorkerId local_id(std::size_t k) const { return static_cast<WorkerId>(k - mine_.begin); }
  std::string process_name(std::size_t k) const {
    return asp_ && k == n_ ? std::string("parameter server") : "worker " + std::to_string(mine_.begin + k);
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  Status check_host();
  Status claim_folder();
  Status make_groups();
  Status write_configuration();
  Status apply_initial_availability();
  void setup_energy();
  // Local process k: the ASP parameter server (the last one) or worker mine_.begin + k, its Gloo rank and threads.
  struct Role {
    bool server = false;
    std::size_t rank = 0;
    int threads = 1;
  };
  Role role(std::size_t k) const;
  std::vector<std::string> worker_argv(std::size_t k) const;
  std::vector<std::string> worker_env(int threads) const;
  Status start_workers();
  void handle_line(std::size_t k, std::string_view line);
  void drain(std::size_t k);
  Status check_liveness();
  Status replay_availability();
  Status check_exits(bool& all_exited);
  bool poll_once();
  void stop_all();
  // An energy reading after a poll round: the counter always, the window's end when iterations arrived.
  void sample_energy() {
    if (energy_ && training_started_) energy_->sample(elapsed(), iteration_seen_);
    iteration_seen_ = false;
  }
  LaunchResult result();

  const scenarios::Scenario& scenario_;
  const LaunchOptions& options_;
  const NodeOptions& nodes_;
  std::function<void(const std::string&)> log_;
  const std::size_t n_;
  const bool asp_, several_, node0_;
  const WorkerRange mine_;  // this node runs workers [begin, end): process k here is worker mine_.begin + k
  const std::size_t local_n_, processes_;
  const std::optional<std::size_t> control_;  // the local process that runs the controller (node 0 only)
  const std::string run_dir_;
  const std::shared_ptr<LaunchEnvironment> env_;

  TestbedConfig config_;
  std::vector<double> shares_, local_shares_;
  std::string data_dir_, run_id_, config_path_, store_file_;
  WorkerProgram worker_;
  bool cuda_ = false, comm_unthrottled_ = false;
  std::optional<AvailabilityReplayer> replayer_;
  std::unique_ptr<run::RunFolder> folder_;
  std::unique_ptr<MpsDaemon> mps_;
  std::vector<int> mps_pct_;
  std::unique_ptr<ResourceThrottler> throttler_;
  std::vector<ThreadFiles> thread_files_;  // per local worker (WorkerGroups::thread_files)
  std::optional<run::Manifest> manifest_;
  std::unique_ptr<run::RunRecorder> recorder_;
  std::optional<SignalGuard> signals_;
  Clock::time_point t0_;
  // The run's energy (CPU runs on one host): measured by the host's counters or modelled from the workers' CPU time.
  // GPU runs: the GPUs' NVML counters here, and their phase records (the recorder's EnergyMeter); several hosts
  // report a reason.
  std::optional<TestbedEnergyMeter> energy_;
  std::string energy_reason_;
  std::string gpu_counter_, gpu_counter_reason_;  // a GPU run's counter (its description), or why none opened
  bool iteration_seen_ = false;  // since the last energy reading

  std::vector<std::unique_ptr<detail::WorkerProcess>> workers_;
  std::vector<std::string> buffers_;
  std::vector<bool> done_;
  std::map<std::string, double> extra_;  // from the workers' ExtraRecords
  run::StopReason stop_reason_ = run::StopReason::kNone;  // the controlling process's (summary.json)
  std::optional<Seconds> replay_origin_s_;
  // Liveness: when each process last reported (or was reported by rank 0 to have made) an iteration. A worker that
  // is down (fraction 0) is not expected to make any (ASP: it polls), so its clock restarts while it is down. The
  // clocks start when training starts (rank 0's training_start_s): start-up (library loading, the dataset, the
  // rendezvous) runs under the workers' quotas and can take long at small shares; a worker that hangs there makes
  // the others' rendezvous fail after gloo_timeout_s, which stops the run with that error.
  std::vector<double> last_row_s_;
  std::vector<double> fraction_;
  bool training_started_ = false;
  Status failure_;
  bool stalled_ = false;
  int stop_signal_ = 0;
};

Status Launch::check_host() {
  OMNI_RETURN_IF_ERROR(validate_nodes(nodes_, n_, asp_));
  auto config = testbed_config(scenario_);
  if (!config) return config.status();
  config_ = std::move(config).value();
  shares_ = worker_cpu_shares(scenario_);
  local_shares_.assign(shares_.begin() + static_cast<std::ptrdiff_t>(mine_.begin),
                       shares_.begin() + static_cast<std::ptrdiff_t>(mine_.end));
  const int host_cpus = host_cpu_count();
  OMNI_RETURN_IF_ERROR(validate_for_testbed(scenario_, several_ ? std::numeric_limits<int>::max() : host_cpus));
  if (several_) OMNI_RETURN_IF_ERROR(validate_local_cpus(local_shares_, host_cpus));
  const scenarios::EmulatorSpec& settings = config_.settings;
  data_dir_ = settings.cache_dir.empty() ? default_dataset_cache_dir() : settings.cache_dir;
  if (settings.train_data.empty()) {  // Fashion-MNIST, unless the user brings data
    OMNI_RETURN_IF_ERROR(env_->prepare_dataset(settings, data_dir_));
  }
  auto plan = run::AvailabilityPlan::create(scenario_);
  if (!plan) return plan.status();
  auto replayer = AvailabilityReplayer::create(*plan);
  if (!replayer) return replayer.status();
  replayer_.emplace(std::move(replayer).value());
  worker_ = env_->worker_program();
  if (::access(worker_.path.c_str(), X_OK) != 0) {
    return Status::not_found("worker program " + worker_.path + " not found or not executable");
  }
  cuda_ = settings.device == Device::kCuda;
  if (cuda_) OMNI_RETURN_IF_ERROR(detail::probe_cuda(worker_.path));
  return Status::ok();
}

// The run folder before any cgroup or worker, so that a second run into it is refused before anything starts.
// Node 0's folder may already hold the other nodes' node<r>/ parts of this run.
Status Launch::claim_folder() {
  run::RunFolderOptions reuse;
  reuse.reuse = options_.reuse;
  if (several_ && node0_) {
    reuse.ignore = [](const std::string& name) {
      return name.size() > 4 && name.starts_with("node") && name.find_first_not_of("0123456789", 4) == std::string::npos;
    };
  }
  auto folder = run::RunFolder::claim(run_dir_, reuse);
  if (!folder) return folder.status();
  folder_ = std::move(folder).value();
  // Unique by construction (pid, start time and a nonce are never cut), so concurrent runs never share a tree,
  // and a later run can tell this launcher's groups from a live one's once it is gone (cgroup_cleanup.h).
  run_id_ = make_run_id(scenario_.name, several_ ? nodes_.node_rank : -1, this_launcher());
  return Status::ok();
}

// The throttler holds this node's workers only, as local ids 0..local_n-1. On a GPU the shares are MPS
// percentages, fixed per process, and availability is a freezer duty cycle.
Status Launch::make_groups() {
  if (cuda_) {
    auto daemon = MpsDaemon::start({"/tmp/" + cgroup_run_folder(run_id_) + "-mps", "", {}, 15.0, 15.0});
    if (!daemon) return daemon.status().with_context("emulator.device: cuda");
    mps_ = std::move(daemon).value();
    mps_pct_ = detail::mps_percentages(local_shares_);
  }
  auto groups = env_->make_groups(run_id_, local_shares_, config_.settings, log_);
  if (!groups) return groups.status();
  throttler_ = std::move(groups->throttler);
  thread_files_ = std::move(groups->thread_files);
  comm_unthrottled_ = !thread_files_.empty() && !thread_files_[0].comm.empty();
  return Status::ok();
}

// config.json (what every worker reads), manifest.json and the record sink.
Status Launch::write_configuration() {
  auto port = several_ ? Result<int>(nodes_.master_port) : free_loopback_port();
  if (!port) return port.status();
  t0_ = Clock::now();
  // One host: the rendezvous goes through a file (a c10d FileStore), so nothing listens on the network. It lives in
  // the run folder (fresh: a stale one would hold an earlier run's keys) and goes when the launch is over.
  store_file_ = several_ ? "" : (std::filesystem::path(run_dir_) / ".rendezvous").string();
  if (!store_file_.empty()) {
    std::error_code ec;
    std::filesystem::remove(store_file_, ec);
  }
  config_.world = static_cast<int>(n_);
  config_.store_file = store_file_;
  config_.store_host = several_ ? nodes_.master_addr : "127.0.0.1";
  config_.bind = several_ ? nodes_.bind_addr : "127.0.0.1";
  config_.port = *port;
  config_.t0_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t0_.time_since_epoch()).count();
  config_.data_dir = data_dir_;
  config_.initial_availability = replayer_->initial();
  config_path_ = (std::filesystem::path(run_dir_) / kTestbedConfigFile).string();
  OMNI_RETURN_IF_ERROR(write_testbed_config(config_, config_path_));
  manifest_.emplace(testbed_manifest(scenario_, options_, run_id_, shares_, worker_.path, comm_unthrottled_));
  auto writer = run::RunWriter::open(std::move(folder_), manifest_->text(), scenario_.outputs.timeline);
  if (!writer) return writer.status();
  recorder_ = std::make_unique<run::RunRecorder>(std::move(writer).value(),
                                                 run::RecorderOptions{true, scenario_.outputs.timeline});
  setup_energy();
  return Status::ok();
}

// Every run reports energy (docs/energy.md, "On the testbed"). CPU workers on one host: the host's counters when it
// has them, and the model from CPU time (the throttler's per-worker accounting, else each process's /proc/PID/stat)
// at the scenario's power figures. GPU workers: the GPUs' NVML counters when they open (RAPL sees only the CPU
// packages), and their phase records charged as the simulator charges them, beside or instead.
void Launch::setup_energy() {
  if (cuda_) {
    recorder_->set_energy_meter(run::EnergyMeter::for_scenario(scenario_));
    if (several_) {
      gpu_counter_reason_ = "a run over several hosts: each node could count only its own GPUs";
      return;
    }
    auto gpu = env_->gpu_energy_counter();
    if (!gpu) {
      gpu_counter_reason_ = gpu.status().message();
      return;
    }
    gpu_counter_ = (*gpu)->description();
    TestbedEnergyMeter::Sources s;
    s.counter = std::move(gpu).value();
    s.figures_reason = "a GPU run is modelled from its phase records instead";
    energy_.emplace(std::move(s));
    return;
  }
  if (several_) {
    energy_reason_ = "not reported for a run over several hosts: each node could count only its own";
    return;
  }
  TestbedEnergyMeter::Sources s;
  auto counter = env_->energy_counter();
  if (counter) {
    s.counter = std::move(counter).value();
  } else {
    s.counter_reason = counter.status().message();
  }
  auto power = run::worker_power(scenario_);
  if (power) {
    for (std::size_t k = 0; k < n_ && k < power->size(); ++k) {
      const run::WorkerPower& p = (*power)[k];
      s.workers.push_back({shares_[k], p.count, p.device.idle_w.value_or(0.0), p.device.busy_at(1.0)});
    }
  } else {
    s.figures_reason = power.status().message();
  }
  const bool cgroup = throttler_->cpu_usage_s(0).is_ok();
  s.cpu_time_origin =
      cgroup ? "the workers' cgroups (cpuacct)" : "the worker processes (/proc/PID/stat: the throttler accounts none)";
  s.cpu_times = [this, cgroup]() -> Result<std::vector<Seconds>> {
    std::vector<Seconds> times;
    for (std::size_t k = 0; k < local_n_; ++k) {
      Result<double> used = cgroup ? throttler_->cpu_usage_s(static_cast<WorkerId>(k))
                            : k < workers_.size() ? process_cpu_s(workers_[k]->pid())
                                                  : Result<double>(Status::not_found("worker not started"));
      if (!used) return used.status();
      times.push_back(*used);
    }
    return times;
  };
  energy_.emplace(std::move(s));
}

// Initial availability (before anyone starts, so nobody runs at the wrong level). Each node applies its own
// workers' changes; node 0 records every worker's (its controller hears of them all), the others their own.
Status Launch::apply_initial_availability() {
  fraction_.assign(replayer_->initial().begin(), replayer_->initial().end());
  for (std::size_t k = 0; k < n_; ++k) {
    const double f = replayer_->initial()[k];
    if (is_local(k) && f != 1.0) {
      Status s = throttler_->apply(local_id(k), f);
      if (!s.is_ok()) return s.with_context("availability at start");
    }
    if (node0_ || is_local(k)) recorder_->availability(static_cast<WorkerId>(k), f, 0.0);
  }
  return Status::ok();
}

Status Launch::prepare() {
  OMNI_RETURN_IF_ERROR(check_host());
  OMNI_RETURN_IF_ERROR(claim_folder());
  OMNI_RETURN_IF_ERROR(make_groups());
  OMNI_RETURN_IF_ERROR(write_configuration());
  return apply_initial_availability();
}

Launch::Role Launch::role(std::size_t k) const {
  Role r;
  r.server = asp_ && k == n_;
  r.rank = r.server ? n_ : mine_.begin + k;
  r.threads = r.server || cuda_ ? 1 : threads_for_share(shares_[r.rank]);
  return r;
}

std::vector<std::string> Launch::worker_argv(std::size_t k) const {
  const auto [server, rank, threads] = role(k);
  std::vector<std::string> argv = {worker_.path, "--config", config_path_, "--rank", std::to_string(rank), "--out-fd",
                                   "{out_fd}", "--in-fd", "{in_fd}", "--threads", std::to_string(threads)};
  if (server) argv.push_back("--server");
  // Node 0's rank 0 also reports the other nodes' rows; elsewhere the first worker reports the training start.
  if (several_ && k == 0) {
    if (node0_) argv.insert(argv.end(), {"--report-from", std::to_string(mine_.end)});
    else argv.push_back("--lead");
  }
  if (!server && config_.settings.throttle == scenarios::QuotaScope::kCompute &&
      local_id(rank) < thread_files_.size()) {
    const ThreadFiles& files = thread_files_[local_id(rank)];
    for (const std::string& f : files.comm) argv.insert(argv.end(), {"--comm-thread-file", f});
    for (const std::string& f : files.compute) argv.insert(argv.end(), {"--compute-thread-file", f});
  }
  argv.insert(argv.end(), worker_.extra_args.begin(), worker_.extra_args.end());
  return argv;
}

// Our environment plus the OpenMP settings that keep throttled threads from burning their quota, the run's secret
// (several hosts) and the worker's MPS share (GPU).
std::vector<std::string> Launch::worker_env(int threads) const {
  std::vector<std::string> extra;
  if (several_) extra.push_back(std::string(kSecretEnv) + "=" + nodes_.secret);
  return detail::worker_thread_env(threads, /*drop=*/{std::string(kSecretEnv)}, extra);
}

Status Launch::start_workers() {
  for (std::size_t k = 0; k < processes_; ++k) {
    const auto [server, rank, threads] = role(k);
    const WorkerId id = local_id(rank);
    std::vector<std::string> env = worker_env(threads);
    if (mps_ && !server) {
      for (std::string& e : mps_->client_env(mps_pct_[static_cast<std::size_t>(id)])) env.push_back(std::move(e));
    }
    auto w = std::make_unique<detail::WorkerProcess>();
    Status started = w->start(worker_argv(k), env, [&](pid_t pid) {
      return server ? Status::ok() : throttler_->attach(id, pid);  // the server is not a throttled worker
    });
    if (!started.is_ok()) return started.with_context("starting " + process_name(k));
    workers_.push_back(std::move(w));
  }
  std::vector<pid_t> pids;
  for (const auto& w : workers_) pids.push_back(w->pid());
  log_("omnilearn emulate: " +
       (several_ ? "node " + std::to_string(nodes_.node_rank) + ": workers " + std::to_string(mine_.begin) + ".." +
                       std::to_string(mine_.end - 1) + " of " + std::to_string(n_) + " "
                 : std::to_string(n_) + " workers ") +
       (asp_ ? "and a parameter server " : "") + "started (run " + run_id_ + ")");
  env_->workers_started(pids);
  return Status::ok();
}

void Launch::handle_line(std::size_t k, std::string_view line) {
  auto msg = decode(line);
  if (!msg) {
    log_("omnilearn emulate: " + process_name(k) + ": " + msg.status().message());
    return;
  }
  if (const auto* r = std::get_if<run::IterationRecord>(&*msg)) {
    recorder_->iteration(*r);
    iteration_seen_ = true;
    last_row_s_[k] = elapsed();
    if (is_local(r->worker)) last_row_s_[local_id(r->worker)] = last_row_s_[k];
  } else if (const auto* p = std::get_if<run::PlanRecord>(&*msg)) {
    recorder_->plan(*p);
  } else if (const auto* e = std::get_if<run::EvaluationRecord>(&*msg)) {
    recorder_->evaluation(*e);
  } else if (const auto* x = std::get_if<ExtraRecord>(&*msg)) {
    extra_[x->key] = x->value;
    if (x->key == "training_start_s") {
      replay_origin_s_ = x->value;
      if (!training_started_) std::fill(last_row_s_.begin(), last_row_s_.end(), elapsed());
      if (energy_) energy_->start(elapsed());
      training_started_ = true;
    }
  } else if (const auto* d = std::get_if<DoneRecord>(&*msg)) {
    done_[k] = true;
    if (control_ && k == *control_) stop_reason_ = d->reason;
  }
}

void Launch::drain(std::size_t k) {
  if (k >= workers_.size()) return;
  detail::drain_lines(*workers_[k], buffers_[k], [&](std::string_view line) { handle_line(k, line); });
}

// The stalled workers (no iteration row for stall_timeout_s) as an error naming them; ok when none. When some
// process here is stopped or stuck in the kernel, that one is named: in BSP every peer waits for it.
Status Launch::check_liveness() {
  const double timeout = config_.settings.stall_timeout_s;
  if (!training_started_ || timeout <= 0.0) return Status::ok();
  const double now = elapsed();
  std::vector<std::size_t> silent;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    if (asp_ && k == n_) continue;  // the parameter server reports no rows; its workers stall if it does
    if (done_[k] || workers_[k]->exited()) continue;
    if (fraction_[mine_.begin + k] == 0.0) last_row_s_[k] = now;
    if (now - last_row_s_[k] >= timeout) silent.push_back(k);
  }
  if (silent.empty()) return Status::ok();
  stalled_ = true;
  std::vector<std::size_t> suspects = silent;
  if (asp_ && workers_.size() > n_) suspects.push_back(n_);
  const std::string setting = " (emulator.stall_timeout_s " + format_g(timeout) + ")";
  for (const std::size_t k : suspects) {
    if (workers_[k]->exited()) continue;
    const std::string why = detail::describe_state(detail::process_state(workers_[k]->pid()));
    if (why.empty()) continue;
    return Status::internal(process_name(k) + " (pid " + std::to_string(workers_[k]->pid()) + ") made no progress for " +
                            format_g(now - last_row_s_[k], 3) + " s: " + why + setting);
  }
  std::string names;
  for (const std::size_t k : silent) names.append(names.empty() ? "" : ", ").append(process_name(k));
  return Status::internal(names + " reported no iteration for " + format_g(now - last_row_s_[silent.front()], 3) +
                          " s" + setting.substr(0, setting.size() - 1) + "; no process here is stopped: " +
                          (several_ ? "a peer on another node, the network or " : "") +
                          "a hung collective may hold them)");
}

// Timed availability runs on the training clock: it starts when rank 0 reports that training started.
Status Launch::replay_availability() {
  const double now = replay_origin_s_ ? elapsed() - *replay_origin_s_ : -1.0;
  for (const AvailabilityEvent& e : replayer_->take_due(now, recorder_->max_epoch())) {
    if (is_local(e.worker)) {
      Status s = throttler_->apply(local_id(e.worker), e.fraction);
      if (!s.is_ok()) return s.with_context("applying availability of worker " + std::to_string(e.worker));
    }
    fraction_[e.worker] = e.fraction;
    if (!node0_ && !is_local(e.worker)) continue;
    const Seconds at = elapsed();
    recorder_->availability(e.worker, e.fraction, at);
    if (control_ && workers_.size() > *control_) workers_[*control_]->send(encode(AvailabilityNotice{e.worker, at, e.fraction}));
  }
  return Status::ok();
}

// A process that exited with an error fails the run; `all_exited` says whether every one has exited.
Status Launch::check_exits(bool& all_exited) {
  all_exited = !workers_.empty();
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    if (!workers_[k]->poll_exit()) {
      all_exited = false;
      continue;
    }
    if (Status failed = detail::exit_failure(*workers_[k], process_name(k)); !failed.is_ok()) {
      drain(k);
      return failed;
    }
  }
  return Status::ok();
}

// One round of the follow loop: wait up to 100 ms (less when a timed change is due) for records or a signal, then
// replay availability, check liveness and exits. False when the loop is over (the end, a failure or a signal).
bool Launch::poll_once() {
  int timeout_ms = 100;
  if (const auto next = replayer_->next_time(); next && replay_origin_s_) {
    timeout_ms = std::clamp(static_cast<int>((*next - (elapsed() - *replay_origin_s_)) * 1000.0) + 1, 0, timeout_ms);
  }
  failure_ =
      detail::poll_workers(signals_->read_fd(), workers_, timeout_ms, stop_signal_, [&](std::size_t k) { drain(k); });
  if (!failure_.is_ok()) return false;
  sample_energy();
  if (stop_signal_ != 0) return false;
  failure_ = replay_availability();
  if (failure_.is_ok()) failure_ = check_liveness();
  bool all_exited = false;
  if (failure_.is_ok()) failure_ = check_exits(all_exited);
  if (!failure_.is_ok()) return false;
  if (!all_exited) return true;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    while (workers_[k]->report_fd() >= 0) drain(k);
  }
  sample_energy();
  return false;
}

// SIGTERM to whatever still runs, then SIGKILL after the grace period; what they wrote is kept.
void Launch::stop_all() {
  detail::stop_workers(workers_, config_.settings.stop_grace_s);
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    if (workers_[k]->report_fd() >= 0) drain(k);
    workers_[k]->close_report();
  }
}

LaunchResult Launch::run() {
  struct RemoveOnExit {
    std::string path;
    ~RemoveOnExit() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove(path, ec);
    }
  } remove_store_file{store_file_};
  signals_.emplace();
  buffers_.assign(processes_, "");
  done_.assign(processes_, false);
  last_row_s_.assign(processes_, 0.0);
  failure_ = start_workers();
  while (failure_.is_ok() && poll_once()) {
  }
  if (!failure_.is_ok() || stop_signal_ != 0) stop_all();
  const Status removed = throttler_->remove();
  if (!removed.is_ok()) log_("omnilearn emulate: cleanup: " + removed.message());
  return result();
}

// The summary (from the records: times count from the start of training, which rank 0 reports), and the outcome.
LaunchResult Launch::result() {
  LaunchResult result;
  result.run_dir = run_dir_;
  run::RunSummary& s = result.summary;
  s.policy = scenario_.policy.name;
  s.mode = asp_ ? "asp" : "bsp";
  s.workers = static_cast<std::int64_t>(n_);
  const auto start = extra_.find("training_start_s");
  recorder_->fill_from_records(s, start != extra_.end() ? start->second : 0.0);
  recorder_->complete(s);
  if (cuda_) {
    s.energy = gpu_run_energy(std::move(s.energy), energy_ ? std::optional(energy_->summary()) : std::nullopt,
                              gpu_counter_, gpu_counter_reason_);
  } else if (energy_) {
    s.energy = energy_->summary();
  } else if (!energy_reason_.empty()) {
    s.energy.emplace().reason = energy_reason_;
  }
  if (const auto it = extra_.find("time_to_target_s"); it != extra_.end() && it->second >= 0.0) s.time_to_target_s = it->second;
  s.extra = extra_;
  s.extra.erase("time_to_target_s");
  s.extra["wall_time_s"] = elapsed();
  s.stop_reason = stop_reason_;
  const bool stopped = detail::set_stopped_outcome(result, stop_signal_, failure_, stalled_, "workers");
  if (!stopped && node0_) {  // the other nodes' parts have no summary.json (node_output_dir)
    Status finished = recorder_->finish(s);
    if (finished.is_ok()) finished = recorder_->rewrite_manifest(manifest_->text(elapsed()));
    if (!finished.is_ok()) {
      result.outcome = RunOutcome::kWorkerFailed;
      result.exit_code = 1;
      result.message = finished.message();
    }
  }
  return result;
}

}  // namespace

Result<LaunchResult> run_emulation(const scenarios::Scenario& scenario, const LaunchOptions& options) {
  // An exception (a third-party library's, bad_alloc) unwinds to here, so the destructors that stop the workers
  // and remove the cgroups run; uncaught, it would abort without unwinding and leak them.
  try {
    Launch launch(scenario, options);
    OMNI_RETURN_IF_ERROR(launch.prepare());
    return launch.run();
  } catch (const std::exception& e) {
    return Status::internal(std::string("the testbed launcher failed: ").append(e.what()) +
                            "; the workers were stopped and the cgroups removed");
  }
}

}  // namespace omnilearn::emulator
