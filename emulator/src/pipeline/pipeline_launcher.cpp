// run_pipeline_testbed(): the stage processes' launcher. Each stage process starts inside its own cgroup at its
// share, calibrates (all stages at once, as they run), and waits; once every stage has calibrated the launcher says
// go. It follows the reports, the exits, the liveness and SIGINT/SIGTERM as `omnilearn
// emulate` does (launcher.cpp), and stops and removes everything however the run ends.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/names.h"
#include "omnilearn/emulator/pipeline_prediction.h"
#include "omnilearn/emulator/pipeline_protocol.h"
#include "../launch/launch_support.h"
#include "../launch/process_poll.h"
#include "../launch/worker_process.h"
#include "pipeline_output.h"

namespace omnilearn::emulator {
namespace {

using Clock = std::chrono::steady_clock;

class PipelineLaunch {
 public:
  PipelineLaunch(const PipelineTestbedSpec& spec, std::string out_dir, const PipelineLaunchOptions& options)
      : spec_(spec), out_(std::move(out_dir)), n_(static_cast<std::size_t>(spec.stages * spec.replicas)),
        env_(options.environment ? options.environment : std::make_shared<HostLaunchEnvironment>()) {
    log_ = options.log ? options.log : [](const std::string& line) { std::cerr << line << "\n"; };
  }

  Status prepare();
  PipelineTestbedResult run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  std::string name(std::size_t k) const {
    return "stage " + std::to_string(k % static_cast<std::size_t>(spec_.stages)) + " of replica " +
           std::to_string(k / static_cast<std::size_t>(spec_.stages));
  }
  Status start_stages();
  void handle_line(std::size_t k, std::string_view line);
  void drain(std::size_t k);
  Status on_calibrated();
  Status check_progress(bool& all_exited);
  bool poll_once();
  void stop_all();
  PipelineTestbedResult result();

  const PipelineTestbedSpec& spec_;
  const std::string out_;
  const std::size_t n_;
  const std::shared_ptr<LaunchEnvironment> env_;
  std::function<void(const std::string&)> log_;
  WorkerProgram program_;
  std::string run_id_, config_path_, store_file_;
  std::unique_ptr<ResourceThrottler> throttler_;
  std::vector<ThreadFiles> thread_files_;
  std::optional<detail::SignalGuard> signals_;
  Clock::time_point t0_ = Clock::now();
  std::vector<std::unique_ptr<detail::WorkerProcess>> stages_;
  std::vector<std::string> buffers_;
  std::vector<std::optional<StageCalibrationReport>> calibrations_;
  std::vector<double> last_report_s_;
  std::vector<bool> done_;
  bool calibrated_ = false;
  PipelineTestbedResult result_;
  Status failure_;
  bool stalled_ = false;
  int stop_signal_ = 0;
};

Status PipelineLaunch::prepare() {
  OMNI_RETURN_IF_ERROR(validate_pipeline_spec(spec_, host_cpu_count()));
  program_ = env_->worker_program();
  if (::access(program_.path.c_str(), X_OK) != 0) {
    return Status::not_found("worker program " + program_.path + " not found or not executable");
  }
  std::error_code ec;
  std::filesystem::create_directories(out_, ec);
  if (ec) return Status::io_error(out_ + ": " + ec.message());
  run_id_ = make_run_id(spec_.name, -1, this_launcher());
  // Every stage runs at its share from the start: its calibration pays what its passes pay in the steps (a pass cut
  // by the quota period resumes on cold caches), which a calibration at a full core does not see.
  scenarios::EmulatorSpec settings;
  settings.cpu_period_s = spec_.cpu_period_s;
  settings.throttle = scenarios::QuotaScope::kCompute;  // Gloo's threads outside the quota: transfers hold no stage
  auto groups = env_->make_groups(run_id_, std::vector<double>(n_, 1.0), settings, log_);
  if (!groups) return groups.status();
  throttler_ = std::move(groups->throttler);
  thread_files_ = std::move(groups->thread_files);
  for (std::size_t k = 0; k < n_; ++k) {
    OMNI_RETURN_IF_ERROR(throttler_->apply(static_cast<WorkerId>(k), spec_.shares[k]).with_context("the quota of " + name(k)));
  }
  store_file_ = (std::filesystem::path(out_) / ".rendezvous").string();
  std::filesystem::remove(store_file_, ec);
  config_path_ = (std::filesystem::path(out_) / "pipeline.json").string();
  return write_pipeline_config({spec_, store_file_}, config_path_);
}

Status PipelineLaunch::start_stages() {
  // Our environment with one OpenMP thread that sleeps when idle: a stage is one thread under its quota.
  const std::vector<std::string> env = detail::worker_thread_env(/*threads=*/1);
  for (std::size_t k = 0; k < n_; ++k) {
    std::vector<std::string> argv = {program_.path, "--pipeline-stage", "--config", config_path_, "--rank",
                                     std::to_string(k), "--out-fd", "{out_fd}", "--in-fd", "{in_fd}"};
    if (k < thread_files_.size()) {
      for (const std::string& f : thread_files_[k].comm) argv.insert(argv.end(), {"--comm-thread-file", f});
    }
    argv.insert(argv.end(), program_.extra_args.begin(), program_.extra_args.end());
    auto w = std::make_unique<detail::WorkerProcess>();
    Status started = w->start(argv, env, [&](pid_t pid) { return throttler_->attach(static_cast<WorkerId>(k), pid); });
    if (!started.is_ok()) return started.with_context("starting " + name(k));
    stages_.push_back(std::move(w));
  }
  std::vector<pid_t> pids;
  for (const auto& w : stages_) pids.push_back(w->pid());
  env_->workers_started(pids);
  log_("omnilearn emulate: " + std::to_string(n_) + " stage processes started (run " + run_id_ + ")");
  return Status::ok();
}

// Every stage has calibrated: every stage may start its steps.
Status PipelineLaunch::on_calibrated() {
  PipelineCalibration& c = result_.calibration;
  const auto stages = static_cast<std::size_t>(spec_.stages);
  c.send_forward_s.assign(stages - 1, 0.0);
  c.send_backward_s.assign(stages - 1, 0.0);
  for (std::size_t k = 0; k < n_; ++k) {
    const StageCalibrationReport& r = *calibrations_[k];
    c.forward_s.push_back(r.forward_s);
    c.backward_s.push_back(r.backward_s);
    c.update_s.push_back(r.update_s);
    if (k < stages - 1) c.send_forward_s[k] = std::max(r.send_forward_s, 0.0);
    if (k < stages - 1) c.send_backward_s[k] = std::max(r.send_backward_s, 0.0);
    c.allreduce_s = std::max(c.allreduce_s, r.allreduce_s);
    c.sync_s = std::max(c.sync_s, r.sync_s);
  }
  for (auto& w : stages_) w->send(std::string(kPipelineGo) + "\n");
  calibrated_ = true;
  log_("omnilearn emulate: calibrated at the shares; " + std::to_string(spec_.warmup_steps + spec_.steps) + " steps");
  return Status::ok();
}

void PipelineLaunch::handle_line(std::size_t k, std::string_view line) {
  auto report = decode_stage_report(line);
  if (!report) {
    log_("omnilearn emulate: " + name(k) + ": " + report.status().message());
    return;
  }
  last_report_s_[k] = elapsed();
  if (const auto* c = std::get_if<StageCalibrationReport>(&*report)) {
    calibrations_[k] = *c;
    if (!calibrated_ && std::all_of(calibrations_.begin(), calibrations_.end(), [](const auto& x) { return x.has_value(); })) {
      if (Status s = on_calibrated(); !s.is_ok() && failure_.is_ok()) failure_ = s;
    }
  } else if (const auto* s = std::get_if<StageStepReport>(&*report)) {
    const auto stages = spec_.stages;
    result_.stage_steps.push_back({s->step, static_cast<std::int64_t>(k) / stages, static_cast<std::int64_t>(k) % stages,
                                   s->compute_s, s->wait_s});
    if (k == 0) result_.measured.push_back({s->step, s->step_s, s->replica_s, s->micro_batches});
  } else {
    done_[k] = true;
  }
}

void PipelineLaunch::drain(std::size_t k) {
  detail::drain_lines(*stages_[k], buffers_[k], [&](std::string_view line) { handle_line(k, line); });
}

// A stage that exited with an error, or reported nothing for stall_timeout_s, fails the run.
Status PipelineLaunch::check_progress(bool& all_exited) {
  all_exited = true;
  const double now = elapsed();
  for (std::size_t k = 0; k < stages_.size(); ++k) {
    if (!stages_[k]->poll_exit()) {
      all_exited = false;
      if (!done_[k] && now - last_report_s_[k] >= spec_.stall_timeout_s) {
        stalled_ = true;
        return Status::internal(name(k) + " (pid " + std::to_string(stages_[k]->pid()) + ") reported nothing for " +
                                std::to_string(static_cast<int>(now - last_report_s_[k])) + " s (stall_timeout_s)");
      }
      continue;
    }
    if (Status failed = detail::exit_failure(*stages_[k], name(k)); !failed.is_ok()) {
      drain(k);
      return failed;
    }
  }
  return Status::ok();
}

bool PipelineLaunch::poll_once() {
  failure_ = detail::poll_workers(signals_->read_fd(), stages_, /*timeout_ms=*/100, stop_signal_,
                                  [&](std::size_t k) { drain(k); });
  if (stop_signal_ != 0 || !failure_.is_ok()) return false;
  bool all_exited = false;
  failure_ = check_progress(all_exited);
  if (!failure_.is_ok()) return false;
  if (!all_exited) return true;
  for (std::size_t k = 0; k < stages_.size(); ++k) {
    while (stages_[k]->report_fd() >= 0) drain(k);
  }
  return false;
}

// SIGTERM to whatever still runs, SIGKILL after 5 s.
void PipelineLaunch::stop_all() {
  detail::stop_workers(stages_, /*grace_s=*/5.0);
  for (auto& w : stages_) w->close_report();
}

PipelineTestbedResult PipelineLaunch::run() {
  signals_.emplace();
  buffers_.assign(n_, "");
  calibrations_.assign(n_, std::nullopt);
  last_report_s_.assign(n_, 0.0);
  done_.assign(n_, false);
  t0_ = Clock::now();
  failure_ = start_stages();
  while (failure_.is_ok() && poll_once()) {
  }
  if (!failure_.is_ok() || stop_signal_ != 0) stop_all();
  const Status removed = throttler_->remove();
  if (!removed.is_ok()) log_("omnilearn emulate: cleanup: " + removed.message());
  std::error_code ec;
  std::filesystem::remove(store_file_, ec);
  return result();
}

PipelineTestbedResult PipelineLaunch::result() {
  PipelineTestbedResult r = std::move(result_);
  const bool stopped = detail::set_stopped_outcome(r, stop_signal_, failure_, stalled_, "stages");
  if (!stopped && !std::all_of(done_.begin(), done_.end(), [](bool d) { return d; })) {
    r.outcome = RunOutcome::kWorkerFailed;
    r.exit_code = 1;
    r.message = "a stage exited without finishing its steps";
  }
  if (r.outcome == RunOutcome::kCompleted) {
    auto predicted = predict_pipeline_steps(spec_, r.calibration);
    if (predicted) {
      r.predicted = std::move(predicted).value();
      r.comparison = compare_pipeline(spec_, r.measured, r.predicted);
    } else {
      r.outcome = RunOutcome::kWorkerFailed, r.exit_code = 1, r.message = predicted.status().message();
    }
  }
  const Status written = write_pipeline_outputs(spec_, r, out_);
  if (!written.is_ok() && r.exit_code == 0) r.outcome = RunOutcome::kWorkerFailed, r.exit_code = 1, r.message = written.message();
  return r;
}

}  // namespace

Result<PipelineTestbedResult> run_pipeline_testbed(const PipelineTestbedSpec& spec, const std::string& out_dir,
                                                   const PipelineLaunchOptions& options) {
  // An exception unwinds to here, so the destructors that stop the stages and remove the cgroups run.
  try {
    PipelineLaunch launch(spec, out_dir, options);
    OMNI_RETURN_IF_ERROR(launch.prepare());
    return launch.run();
  } catch (const std::exception& e) {
    return Status::internal(std::string("the pipeline launcher failed: ").append(e.what()) +
                            "; the stages were stopped and the cgroups removed");
  }
}

}  // namespace omnilearn::emulator
