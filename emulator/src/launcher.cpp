#include "omnilearn/emulator/launcher.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "omnilearn/base/format.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/emulator/availability_replayer.h"
#include "omnilearn/emulator/cgroup_cleanup.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/join_secret.h"
#include "omnilearn/emulator/mps_daemon.h"
#include "omnilearn/emulator/names.h"
#include "omnilearn/emulator/worker_protocol.h"
#include "gpu_launch.h"
#include "launch_support.h"
#include "run_statistics.h"
#include "worker_process.h"

extern char** environ;

namespace omnilearn::emulator {
namespace {

using Clock = std::chrono::steady_clock;
using detail::describe_exit;
using detail::free_loopback_port;
using detail::manifest_json;
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

std::string default_worker_executable() {
  const std::filesystem::path exe = current_executable();
  return worker_executable(exe, locate_install_layout(exe));
}

namespace {

Result<LaunchResult> run_emulation_or_throw(const scenarios::Scenario& scenario, const EmulatorConfig& config,
                                            const LaunchOptions& options) {
  auto log = options.log ? options.log : [](const std::string& line) { std::cerr << line << "\n"; };
  const std::size_t n = scenario.worker_count();
  // ASP adds a parameter server process (index n, Gloo rank n) outside the workers' groups; it runs the controller,
  // so it gets the availability notices and reports the stop reason (BSP: rank 0).
  const bool asp = scenario.mode == controller::TrainingMode::kAsp;
  // Several hosts: this node runs workers [mine.begin, mine.end) (Gloo ranks, scenario worker ids); process k here
  // is worker mine.begin + k. Node 0 runs rank 0, which runs the controller and reports for the run.
  const NodeOptions& nodes = options.nodes;
  OMNI_RETURN_IF_ERROR(validate_nodes(nodes, n, asp));
  const bool several = nodes.nnodes > 1;
  const bool node0 = nodes.node_rank == 0;
  const WorkerRange mine = node_worker_range(n, nodes.nnodes, nodes.node_rank);
  const std::size_t local_n = mine.end - mine.begin;
  auto is_local = [&](std::size_t k) { return k >= mine.begin && k < mine.end; };
  auto local_id = [&](std::size_t k) { return static_cast<WorkerId>(k - mine.begin); };
  const std::size_t processes = local_n + (asp ? 1 : 0);
  const std::optional<std::size_t> control = node0 ? std::optional<std::size_t>(asp ? n : 0) : std::nullopt;
  auto process_name = [&](std::size_t k) {
    return asp && k == n ? std::string("parameter server") : "worker " + std::to_string(mine.begin + k);
  };
  if (scenario.source_path.empty()) return Status::invalid_argument("the testbed needs a scenario file (workers load it)");
  const std::vector<double> shares = worker_cpu_shares(scenario, config);
  const std::vector<double> local_shares(shares.begin() + static_cast<std::ptrdiff_t>(mine.begin),
                                         shares.begin() + static_cast<std::ptrdiff_t>(mine.end));
  if (options.check_host_cpus) {
    const int host_cpus = host_cpu_count();
    OMNI_RETURN_IF_ERROR(validate_for_testbed(scenario, config, several ? std::numeric_limits<int>::max() : host_cpus));
    if (several) OMNI_RETURN_IF_ERROR(validate_local_cpus(local_shares, host_cpus));
  }

  std::string data_dir = config.cache_dir.empty() ? default_dataset_cache_dir() : config.cache_dir;
  if (options.prepare_dataset) {
    auto prepared = prepare_fashion_mnist(config.data_source, data_dir);
    if (!prepared) return prepared.status();
  }
  auto replayer_or = AvailabilityReplayer::create(scenario);
  if (!replayer_or) return replayer_or.status();
  AvailabilityReplayer replayer = std::move(replayer_or).value();

  const std::string worker_exe = options.worker_executable.empty() ? default_worker_executable() : options.worker_executable;
  if (::access(worker_exe.c_str(), X_OK) != 0) {
    return Status::not_found("worker program " + worker_exe + " not found or not executable");
  }
  const bool cuda = config.device == Device::kCuda;
  if (cuda) OMNI_RETURN_IF_ERROR(detail::probe_cuda(worker_exe));
  // The run folder before any cgroup or worker, so that a second run into it is refused before anything starts.
  // Node 0's folder may already hold the other nodes' node<r>/ parts of this run.
  scenarios::RunFolderOptions reuse;
  reuse.reuse = options.reuse;
  if (several && node0) {
    reuse.ignore = [](const std::string& name) {
      return name.size() > 4 && name.starts_with("node") &&
             name.find_first_not_of("0123456789", 4) == std::string::npos;
    };
  }
  auto folder = scenarios::RunFolder::claim(node_output_dir(options.output_dir, nodes.node_rank), reuse);
  if (!folder) return folder.status();
  // Unique by construction (pid, start time and a nonce are never cut), so concurrent runs never share a tree,
  // and a later run can tell this launcher's groups from a live one's once it is gone (cgroup_cleanup.h).
  const std::string run_id = make_run_id(scenario.name, several ? nodes.node_rank : -1, this_launcher());

  // From here on every return unwinds through the throttler's and the MPS daemon's destructors, which remove them.
  if (!options.make_throttler) {
    // A launcher killed with SIGKILL left its groups: remove those of launchers that are gone (never a live run's).
    const CgroupCleanup stale = remove_stale_cgroups();
    for (const std::string& f : stale.removed) log("omnilearn emulate: removed the stale cgroup " + f);
    if (!stale.status.is_ok()) log("omnilearn emulate: note: " + stale.status.message());
  }

  // The throttler holds this node's workers only, as local ids 0..local_n-1.
  // On a GPU the shares are MPS percentages, fixed per process, and availability is a freezer duty cycle.
  std::unique_ptr<MpsDaemon> mps;
  std::vector<int> mps_pct;
  if (cuda) {
    auto daemon = MpsDaemon::start({"/tmp/" + cgroup_run_folder(run_id) + "-mps", "", {}, 15.0, 15.0});
    if (!daemon) return daemon.status().with_context("--device cuda");
    mps = std::move(daemon).value();
    mps_pct = detail::mps_percentages(local_shares);
  }
  Result<std::unique_ptr<ResourceThrottler>> throttler_or =
      options.make_throttler ? options.make_throttler(run_id, local_shares)
      : cuda ? detail::make_gpu_throttler(run_id, local_n, host_cpu_count(), config)
             : make_cgroup_throttler({run_id, local_shares, config.cpu_period_s, config.cpuset,
                                      config.throttle_compute_only});
  if (!throttler_or) return throttler_or.status();
  std::unique_ptr<ResourceThrottler> throttler = std::move(throttler_or).value();

  const bool comm_unthrottled = !throttler->comm_thread_files(0).empty();
  if (config.throttle_compute_only && !comm_unthrottled && !options.make_throttler) {
    log("omnilearn emulate: note: cgroup v2 here, so each quota holds its whole worker process, communication "
        "threads included (emulator.throttle=compute splits them on cgroup v1 only)");
  }
  auto port = several ? Result<int>(nodes.master_port) : free_loopback_port();
  if (!port) return port.status();

  const std::string run_dir = node_output_dir(options.output_dir, nodes.node_rank);
  auto manifest = manifest_json(scenario, config, options, run_id, shares, worker_exe, comm_unthrottled);
  if (!manifest) return manifest.status();
  auto writer_or = scenarios::RunWriter::open(std::move(folder).value(), *manifest, scenario.outputs.timeline);
  if (!writer_or) return writer_or.status();
  std::unique_ptr<scenarios::RunWriter> writer = std::move(writer_or).value();
  detail::RunStatistics stats(n);

  // Environment: ours plus the OpenMP settings that keep throttled threads from burning their quota (NOTES.md).
  auto worker_env = [&](int threads) {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string_view kv(*e);
      if (kv.starts_with("OMP_WAIT_POLICY=") || kv.starts_with("OMP_NUM_THREADS=") || kv.starts_with("MKL_NUM_THREADS=")) continue;
      if (kv.starts_with(std::string(kSecretEnv) + "=")) continue;
      env.emplace_back(kv);
    }
    if (several) env.push_back(std::string(kSecretEnv) + "=" + nodes.secret);
    env.push_back("OMP_WAIT_POLICY=PASSIVE");
    env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
    env.push_back("MKL_NUM_THREADS=" + std::to_string(threads));
    return env;
  };

  SignalGuard signals;
  const Clock::time_point t0 = Clock::now();
  auto elapsed = [&]() { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  const auto t0_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count();

  std::optional<Seconds> replay_origin_s;
  LaunchResult result;
  result.run_dir = run_dir;
  std::vector<std::unique_ptr<detail::WorkerProcess>> workers;
  std::vector<std::string> buffers(processes);
  std::vector<bool> done(processes, false);
  Status failure;

  // Initial availability (before anyone starts, so nobody runs at the wrong level). Each node applies its own
  // workers' changes; node 0 records every worker's (its controller hears of them all), the others their own.
  for (std::size_t k = 0; k < n; ++k) {
    if (is_local(k) && replayer.initial()[k] != 1.0) {
      Status s = throttler->apply(local_id(k), replayer.initial()[k]);
      if (!s.is_ok()) return s.with_context("availability at start");
    }
    if (node0 || is_local(k)) {
      writer->add(scenarios::AvailabilityRecord{0.0, static_cast<WorkerId>(k), replayer.initial()[k]});
    }
  }

  // One host: the rendezvous goes through a file (a c10d FileStore), so nothing listens on the network. It lives in
  // the run folder (fresh: a stale one would hold an earlier run's keys) and goes when the launcher returns.
  const std::string store_file = several ? "" : (std::filesystem::path(run_dir) / ".rendezvous").string();
  struct RemoveOnExit {
    std::string path;
    ~RemoveOnExit() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove(path, ec);
    }
  } remove_store_file{store_file};
  if (!store_file.empty()) {
    std::error_code ec;
    std::filesystem::remove(store_file, ec);
  }

  const std::string scenario_path = std::filesystem::absolute(scenario.source_path).string();
  for (std::size_t k = 0; k < processes && failure.is_ok(); ++k) {
    const bool server = asp && k == n;
    const std::size_t rank = server ? n : mine.begin + k;
    const int threads = server || cuda ? 1 : threads_for_share(shares[rank]);
    std::vector<std::string> argv = {worker_exe, "--scenario", scenario_path};
    for (const std::string& o : options.overrides) argv.insert(argv.end(), {"--set", o});
    argv.insert(argv.end(), {"--rank", std::to_string(rank), "--world", std::to_string(n), "--port",
                             std::to_string(*port), "--t0-ns", std::to_string(t0_ns), "--out-fd", "{out_fd}",
                             "--in-fd", "{in_fd}", "--threads", std::to_string(threads), "--data-dir", data_dir});
    for (const std::string& s : to_settings(config)) argv.insert(argv.end(), {"--cfg", s});
    if (asp) argv.insert(argv.end(), {server ? "--server" : "--asp", "1"});
    if (!several) argv.insert(argv.end(), {"--store-file", store_file});
    if (several) {
      argv.insert(argv.end(), {"--store-host", nodes.master_addr, "--bind", nodes.bind_addr});
      // Node 0's rank 0 also reports the other nodes' rows; elsewhere the first worker reports the training start.
      if (k == 0) argv.insert(argv.end(), {node0 ? "--report-from" : "--lead", node0 ? std::to_string(mine.end) : "1"});
    }
    const WorkerId id = local_id(rank);
    if (!server && config.throttle_compute_only) {
      for (const std::string& f : throttler->comm_thread_files(id)) argv.insert(argv.end(), {"--comm-thread-file", f});
      for (const std::string& f : throttler->compute_thread_files(id)) argv.insert(argv.end(), {"--compute-thread-file", f});
    }
    argv.insert(argv.end(), options.extra_worker_args.begin(), options.extra_worker_args.end());
    auto w = std::make_unique<detail::WorkerProcess>();
    std::vector<std::string> env = worker_env(threads);
    if (mps && !server) {
      for (std::string& e : mps->client_env(mps_pct[static_cast<std::size_t>(id)])) env.push_back(std::move(e));
    }
    Status started = w->start(argv, env, [&](pid_t pid) {
      return server ? Status::ok() : throttler->attach(id, pid);  // the server is not a throttled worker
    });
    if (!started.is_ok()) {
      failure = started.with_context("starting " + process_name(k));
      break;
    }
    workers.push_back(std::move(w));
  }
  if (failure.is_ok()) {
    std::vector<pid_t> pids;
    for (const auto& w : workers) pids.push_back(w->pid());
    log("omnilearn emulate: " + (several ? "node " + std::to_string(nodes.node_rank) + ": workers " +
                                               std::to_string(mine.begin) + ".." + std::to_string(mine.end - 1) + " of " +
                                               std::to_string(n) + " "
                                         : std::to_string(n) + " workers ") +
        (asp ? "and a parameter server " : "") + "started (run " + run_id + ")");
    if (options.on_started) options.on_started(pids);
  }

  // Liveness: when each process last reported (or was reported by rank 0 to have made) an iteration. A worker that
  // is down (fraction 0) is not expected to make any (ASP: it polls), so its clock restarts while it is down. The
  // clocks start when training starts (rank 0's training_start_s): start-up (library loading, the dataset, the
  // rendezvous) runs under the workers' quotas and can take long at small shares; a worker that hangs there makes
  // the others' rendezvous fail after gloo_timeout_s, which stops the run with that error.
  std::vector<double> last_row_s(processes, 0.0);
  bool training_started = false;
  std::vector<double> fraction(replayer.initial().begin(), replayer.initial().end());
  bool stalled = false;
  auto handle_line = [&](std::size_t k, std::string_view line) {
    auto msg = decode(line);
    if (!msg) {
      log("omnilearn emulate: " + process_name(k) + ": " + msg.status().message());
      return;
    }
    if (const auto* r = std::get_if<scenarios::IterationRecord>(&*msg)) {
      writer->add(*r);
      last_row_s[k] = elapsed();
      if (is_local(r->worker)) last_row_s[local_id(r->worker)] = last_row_s[k];
      writer->span(r->worker, "compute", r->start_s, r->compute_s);
      if (r->wait_s > 0) writer->span(r->worker, "wait", r->start_s + r->compute_s, r->wait_s);
      if (r->comm_s > 0) writer->span(r->worker, "comm", r->start_s + r->compute_s + r->wait_s, r->comm_s);
      stats.add(*r);
    } else if (const auto* p = std::get_if<scenarios::PlanRecord>(&*msg)) {
      writer->add(*p);
      stats.add(*p);
    } else if (const auto* e = std::get_if<scenarios::EvaluationRecord>(&*msg)) {
      writer->add(*e);
      writer->instant("evaluation", e->time_s, std::string("{\"accuracy\": ").append(std::to_string(e->accuracy)).append("}"));
      stats.add(*e);
    } else if (const auto* x = std::get_if<ExtraRecord>(&*msg)) {
      stats.extra[x->key] = x->value;
      if (x->key == "training_start_s") {
        replay_origin_s = x->value;
        if (!training_started) std::fill(last_row_s.begin(), last_row_s.end(), elapsed());
        training_started = true;
      }
    } else if (const auto* d = std::get_if<DoneRecord>(&*msg)) {
      done[k] = true;
      if (control && k == *control) stats.stop_reason = d->reason;
    }
  };
  auto drain = [&](std::size_t k) {
    if (k >= workers.size()) return;
    workers[k]->read_available(buffers[k]);
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffers[k].find('\n', start)) != std::string::npos; start = nl + 1) {
      handle_line(k, std::string_view(buffers[k]).substr(start, nl - start));
    }
    buffers[k].erase(0, start);
  };

  // The stalled workers (no iteration row for stall_timeout_s) as an error naming them; ok when none. When some
  // process here is stopped or stuck in the kernel, that one is named: in BSP every peer waits for it.
  auto check_liveness = [&]() -> Status {
    if (!training_started) return Status::ok();
    const double now = elapsed();
    std::vector<std::size_t> silent;
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (asp && k == n) continue;  // the parameter server reports no rows; its workers stall if it does
      if (done[k] || workers[k]->exited()) continue;
      if (fraction[mine.begin + k] == 0.0) last_row_s[k] = now;
      if (now - last_row_s[k] >= config.stall_timeout_s) silent.push_back(k);
    }
    if (silent.empty()) return Status::ok();
    std::vector<std::size_t> suspects = silent;
    if (asp && workers.size() > n) suspects.push_back(n);
    for (const std::size_t k : suspects) {
      if (workers[k]->exited()) continue;
      const std::string why = detail::describe_state(detail::process_state(workers[k]->pid()));
      if (why.empty()) continue;
      return Status::internal(process_name(k) + " (pid " + std::to_string(workers[k]->pid()) +
                                       ") made no progress for " + format_g(now - last_row_s[k], 3) +
                                       " s: " + why + " (emulator.stall_timeout_s " +
                                       format_g(config.stall_timeout_s) + ")");
    }
    std::string names;
    for (const std::size_t k : silent) names.append(names.empty() ? "" : ", ").append(process_name(k));
    return Status::internal(names + " reported no iteration for " +
                                     format_g(now - last_row_s[silent.front()], 3) + " s (emulator.stall_timeout_s " +
                                     format_g(config.stall_timeout_s) + "; no process here is stopped: " +
                                     (several ? "a peer on another node, the network or " : "") +
                                     "a hung collective may hold them)");
  };

  int stop_signal = 0;
  while (failure.is_ok()) {
    // Timed availability runs on the training clock: it starts when rank 0 reports that training started.
    auto replay_now = [&]() { return replay_origin_s ? elapsed() - *replay_origin_s : -1.0; };
    std::vector<pollfd> fds;
    std::vector<std::size_t> owner;
    fds.push_back({signals.read_fd(), POLLIN, 0});
    owner.push_back(n);
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (workers[k]->report_fd() >= 0) {
        fds.push_back({workers[k]->report_fd(), POLLIN, 0});
        owner.push_back(k);
      }
    }
    int timeout_ms = 100;
    if (const auto next = replayer.next_time(); next && replay_origin_s) {
      timeout_ms = std::clamp(static_cast<int>((*next - replay_now()) * 1000.0) + 1, 0, timeout_ms);
    }
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      failure = Status::io_error(std::string("poll: ") + std::strerror(errno));
      break;
    }
    if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
      char signo = 0;
      if (::read(signals.read_fd(), &signo, 1) == 1) stop_signal = signo;
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) drain(owner[i]);
    }
    if (stop_signal != 0) break;

    for (const AvailabilityEvent& e : replayer.take_due(replay_now(), stats.current_epoch())) {
      if (is_local(e.worker)) {
        Status s = throttler->apply(local_id(e.worker), e.fraction);
        if (!s.is_ok()) {
          failure = s.with_context("applying availability of worker " + std::to_string(e.worker));
          break;
        }
      }
      fraction[e.worker] = e.fraction;
      if (!node0 && !is_local(e.worker)) continue;
      const Seconds at = elapsed();
      writer->add(scenarios::AvailabilityRecord{at, e.worker, e.fraction});
      writer->instant("availability", at, std::string("{\"worker\": ").append(std::to_string(e.worker))
                                              .append(", \"fraction\": ").append(std::to_string(e.fraction)).append("}"));
      if (control && workers.size() > *control) workers[*control]->send(encode(AvailabilityNotice{e.worker, at, e.fraction}));
    }
    if (!failure.is_ok()) break;

    if (config.stall_timeout_s > 0.0) {
      failure = check_liveness();
      if (!failure.is_ok()) {
        stalled = true;
        break;
      }
    }

    bool all_exited = true;
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (!workers[k]->poll_exit()) {
        all_exited = false;
        continue;
      }
      const int status = workers[k]->status();
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        drain(k);
        failure = Status::internal(process_name(k) + " (pid " + std::to_string(workers[k]->pid()) + ") " +
                                   describe_exit(status));
        break;
      }
    }
    if (failure.is_ok() && all_exited && !workers.empty()) {
      for (std::size_t k = 0; k < workers.size(); ++k) {
        while (workers[k]->report_fd() >= 0) drain(k);
      }
      break;
    }
  }

  // Stop whatever still runs: SIGTERM, then SIGKILL after the grace period; keep what they wrote.
  const bool stopping = !failure.is_ok() || stop_signal != 0;
  if (stopping) {
    for (auto& w : workers) w->signal(SIGTERM);
    const auto deadline = Clock::now() + std::chrono::duration<double>(config.stop_grace_s);
    for (;;) {
      bool all = true;
      for (auto& w : workers) all = w->poll_exit() && all;
      if (all || Clock::now() >= deadline) break;
      ::usleep(20000);
    }
    for (auto& w : workers) {
      if (!w->exited()) w->signal(SIGKILL);
      w->wait();
    }
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (workers[k]->report_fd() >= 0) drain(k);
      workers[k]->close_report();
    }
  }
  const Status removed = throttler->remove();
  if (!removed.is_ok()) log("omnilearn emulate: cleanup: " + removed.message());

  result.summary = stats.summary(scenario, elapsed());
  if (stop_signal != 0) {
    result.outcome = stop_signal == SIGINT ? RunOutcome::kInterrupted : RunOutcome::kTerminated;
    result.exit_code = 128 + stop_signal;
    result.message = std::string("stopped by ").append(strsignal(stop_signal)).append("; workers stopped, cgroups removed");
  } else if (!failure.is_ok()) {
    result.outcome = stalled ? RunOutcome::kStalled : RunOutcome::kWorkerFailed;
    result.exit_code = 1;
    result.message = failure.message() + "; the other workers were stopped and the cgroups removed";
  } else if (node0) {  // the other nodes' parts have no summary.json (node_output_dir)
    Status finished = writer->finish(result.summary);
    if (!finished.is_ok()) {
      result.outcome = RunOutcome::kWorkerFailed;
      result.exit_code = 1;
      result.message = finished.message();
    }
  }
  return result;
}

}  // namespace

Result<LaunchResult> run_emulation(const scenarios::Scenario& scenario, const EmulatorConfig& config,
                                   const LaunchOptions& options) {
  // An exception (a third-party library's, bad_alloc) unwinds to here, so the destructors that stop the workers
  // and remove the cgroups run; uncaught, it would abort without unwinding and leak them.
  try {
    return run_emulation_or_throw(scenario, config, options);
  } catch (const std::exception& e) {
    return Status::internal(std::string("the testbed launcher failed: ").append(e.what()) +
                            "; the workers were stopped and the cgroups removed");
  }
}

}  // namespace omnilearn::emulator
