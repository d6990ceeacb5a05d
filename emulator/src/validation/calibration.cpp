#include "omnilearn/emulator/calibration.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <numeric>
#include <nlohmann/json.hpp>

#include "omnilearn/base/format.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/scenarios/scenario_json.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/emulator/names.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/scenarios/model_profile_file.h"
#include "launch/process_poll.h"
#include "launch/worker_process.h"

namespace omnilearn::emulator {
namespace {

// Six significant digits: profile and fidelity values, log lines.
std::string fmt(double v) { return format_g(v, 6); }
double six_digits(double v) { return std::strtod(fmt(v).c_str(), nullptr); }

using Clock = std::chrono::steady_clock;

// Reads one JSON line from the worker, waiting up to `timeout_s`.
Result<nlohmann::json> read_reply(detail::WorkerProcess& w, std::string& buffer, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (const std::size_t nl = buffer.find('\n'); nl != std::string::npos) {
      const std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      try {
        return nlohmann::json::parse(line);
      } catch (const std::exception& e) {
        return Status::parse_error("calibration worker sent \"" + line.substr(0, 200) + "\": " + e.what());
      }
    }
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) return Status::io_error("calibration worker: no answer within " + std::to_string(timeout_s) + " s");
    pollfd fd{w.report_fd(), POLLIN, 0};
    if (fd.fd < 0) return Status::io_error("calibration worker closed its pipe");
    (void)::poll(&fd, 1, static_cast<int>(std::min(left, 1.0) * 1000.0) + 1);
    if (!w.read_available(buffer) && buffer.find('\n') == std::string::npos) {
      w.wait();
      return Status::io_error("calibration worker exited (status " + std::to_string(w.status()) +
                              "); its error is on stderr above");
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Result<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y, std::span<const double> weights) {
  const std::size_t n = x.size();
  if (n < 2 || y.size() != n) return Status::invalid_argument("fit_linear: needs >= 2 points");
  if (!weights.empty() && weights.size() != n) return Status::invalid_argument("fit_linear: one weight per point");
  auto w = [&](std::size_t i) { return weights.empty() ? 1.0 : weights[i]; };
  double sw = 0.0, mx = 0.0, my = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(w(i) > 0.0)) return Status::invalid_argument("fit_linear: weights must be > 0");
    sw += w(i), mx += w(i) * x[i], my += w(i) * y[i];
  }
  mx /= sw, my /= sw;
  double sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += w(i) * (x[i] - mx) * (x[i] - mx);
    sxy += w(i) * (x[i] - mx) * (y[i] - my);
    syy += w(i) * (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0.0) return Status::invalid_argument("fit_linear: needs two distinct x values");
  LinearFit f;
  f.per_unit = sxy / sxx;
  f.fixed = my - f.per_unit * mx;
  double ss_res = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = y[i] - (f.fixed + f.per_unit * x[i]);
    ss_res += w(i) * r * r;
  }
  f.r2 = syy > 0.0 ? 1.0 - ss_res / syy : 1.0;
  return f;
}

Result<LinearFit> fit_linear_relative(std::span<const double> x, std::span<const double> y) {
  std::vector<double> weights;
  for (double v : y) {
    if (!(v > 0.0)) return Status::invalid_argument("fit_linear_relative: needs y > 0");
    weights.push_back(1.0 / (v * v));
  }
  return fit_linear(x, y, weights);
}

namespace {

using Log = std::function<void(const std::string&)>;

Status check_options(const CalibrationOptions& o) {
  if (o.batches.size() < 2) return Status::invalid_argument("--batches: at least two batch sizes are needed for the fit");
  if (o.reps < 1) return Status::invalid_argument("--reps: must be >= 1");
  if (o.rounds < 1) return Status::invalid_argument("--rounds: must be >= 1");
  if (!(o.settings.sample_cost_s >= 0.0 && o.settings.sample_cost_s <= 1.0)) {
    return Status::invalid_argument("--sample-cost: CPU seconds per sample in [0, 1]");
  }
  for (double s : o.shares) {
    if (!(s > 0.0 && s <= 1.0)) return Status::invalid_argument("--shares: each share must be in (0, 1]");
  }
  return Status::ok();
}

// The worker's cgroup (one core, the share sweep's quota), or none, with the reason in report.share_sweep_skipped.
std::unique_ptr<CgroupThrottler> make_throttler(const CalibrationOptions& o, const Log& log,
                                                CalibrationReport& report) {
  if (!o.share_sweep && o.cpuset.empty()) {
    report.share_sweep_skipped = "not asked for (--no-shares)";
    return nullptr;
  }
  // One core, one thread: a share of 1.0 is a full core (the testbed gives each worker ceil(share) threads).
  CgroupThrottlerOptions c;
  c.run_id = make_run_id("calibrate", -1, this_launcher());  // stale-group clean-up knows it
  c.nominal_cores = {1.0};
  c.period_s = o.period_s;
  c.cpuset = o.cpuset;
  auto t = make_cgroup_throttler(c);
  if (t) return std::move(t).value();
  report.share_sweep_skipped = t.status().message();
  log("omnilearn calibrate: no CPU quota sweep: " + t.status().message());
  return nullptr;
}

// One measured point: the worker's step times (wall and CPU), and the CPU its cgroup used.
struct Point {
  std::vector<double> times;
  std::vector<double> cpu_times;  // the worker thread's CPU time of each step
  double worker_wall_s = 0.0;
  double wall_s = 0.0;    // around the whole command, seen from here
  double cpu_s = -1.0;    // CPU the cgroup used in that window (-1: unknown)
};

// The worker program in --calibrate mode, started inside the throttler's group (when there is one): it answers
// `run BATCH REPS WARMUP` with its step times. Killed by the destructor unless quit() ran.
class CalibrationWorker {
 public:
  CalibrationWorker(const CalibrationOptions& o, CgroupThrottler* throttler) : o_(o), throttler_(throttler) {}

  // Starts it and reads its greeting (the network's size) into `report`.
  Status start(const std::string& exe, const std::string& data_dir, CalibrationReport& report) {
    const std::vector<std::string> argv = {exe, "--calibrate", "--settings", nlohmann::json(o_.settings).dump(),
                                           "--threads", "1", "--data-dir", data_dir, "--out-fd", "{out_fd}", "--in-fd", "{in_fd}"};
    // One single-threaded, passive OpenMP/MKL: the worker computes on one core.
    OMNI_RETURN_IF_ERROR(process_.start(argv, detail::worker_thread_env(/*threads=*/1), [&](pid_t pid) {
      return throttler_ ? throttler_->attach(0, pid) : Status::ok();
    }));
    auto ready = read_reply(process_, buffer_, 120.0);
    if (!ready) return ready.status();
    report.network = (*ready)["network"].get<std::string>();
    report.parameters = (*ready)["parameters"].get<std::int64_t>();
    report.forward_macs = (*ready)["forward_macs"].get<double>();
    report.threads = (*ready)["threads"].get<int>();
    report.sample_cost_s = o_.settings.sample_cost_s;
    return Status::ok();
  }

  Result<Point> measure(BatchSize batch) {
    Point p;
    const auto cpu0 = cpu_used_s();
    const auto w0 = Clock::now();
    if (!process_.send("run " + std::to_string(batch) + " " + std::to_string(o_.reps) + " " + std::to_string(o_.warmup) +
                       "\n")) {
      return Status::io_error("calibration worker is gone");
    }
    auto reply = read_reply(process_, buffer_, 600.0);
    if (!reply) return reply.status();
    p.wall_s = std::chrono::duration<double>(Clock::now() - w0).count();
    const auto cpu1 = cpu_used_s();
    if (cpu0 && cpu1) p.cpu_s = *cpu1 - *cpu0;
    p.times = (*reply)["times_s"].get<std::vector<double>>();
    p.cpu_times = reply->value("cpu_times_s", std::vector<double>{});
    p.worker_wall_s = (*reply)["wall_s"].get<double>();
    return p;
  }

  void quit() {
    (void)process_.send("quit\n");
    process_.wait();
  }

 private:
  Result<double> cpu_used_s() const {
    return throttler_ ? throttler_->cpu_usage_s(0) : Result<double>(Status::not_found("no cgroup"));
  }

  const CalibrationOptions& o_;
  CgroupThrottler* throttler_;
  detail::WorkerProcess process_;
  std::string buffer_;
};

BatchTiming batch_timing(BatchSize batch, const std::vector<double>& times) {
  BatchTiming t;
  t.batch = batch;
  t.reps = static_cast<int>(times.size());
  t.mean_s = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(t.reps);
  t.median_s = median(times);
  t.min_s = *std::min_element(times.begin(), times.end());
  return t;
}

// `rounds` passes over the batches, pooled per batch: a slower minute of the host falls on every batch alike
// instead of bending the line. Fills report.batches and report.fit.
// The law is a step's time on a full core: with one worker thread (as start() asks) that is the step's CPU time (the
// thread never waits; the emulated cost, sample_cost_s, is CPU time by definition), which a busy neighbour's
// preemption does not lengthen as it does the wall time; with several threads, the wall time. The line is fitted to
// each batch's fastest step: a delay (preemption, or CPU time spent once, such as a TorchScript module's compilation
// in its first steps) only lengthens the steps it falls on, so it does not move the law unless it falls on them all.
Status batch_sweep(CalibrationWorker& worker, const CalibrationOptions& o, const Log& log, CalibrationReport& report) {
  std::vector<std::vector<double>> pooled(o.batches.size());
  for (int round = 0; round < o.rounds; ++round) {
    for (std::size_t i = 0; i < o.batches.size(); ++i) {
      auto p = worker.measure(o.batches[i]);
      if (!p) return p.status();
      const bool cpu = report.threads == 1 && p->cpu_times.size() == p->times.size();
      const std::vector<double>& times = cpu ? p->cpu_times : p->times;
      pooled[i].insert(pooled[i].end(), times.begin(), times.end());
    }
    log("  batch sweep: round " + std::to_string(round + 1) + " of " + std::to_string(o.rounds) + " done");
  }
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < o.batches.size(); ++i) {
    if (pooled[i].empty()) return Status::io_error("calibration worker returned no step times");
    const BatchTiming t = batch_timing(o.batches[i], pooled[i]);
    report.batches.push_back(t);
    xs.push_back(static_cast<double>(t.batch));
    ys.push_back(t.min_s);
    log("  batch " + std::to_string(t.batch) + ": fastest " + fmt(t.min_s * 1e3) + " ms, median " +
        fmt(t.median_s * 1e3) + " ms, mean " + fmt(t.mean_s * 1e3) + " ms");
  }
  auto fit = fit_linear_relative(xs, ys);
  if (!fit) return fit.status();
  report.fit = *fit;
  return Status::ok();
}

// The quota sweep, from the full core (the reference) down; fills report.fidelity in ascending share.
Status share_sweep(CalibrationWorker& worker, ResourceThrottler& throttler, const CalibrationOptions& o, const Log& log,
                   CalibrationReport& report) {
  std::vector<double> shares = o.shares;
  std::sort(shares.begin(), shares.end(), std::greater<>());
  if (shares.empty() || shares.front() != 1.0) shares.insert(shares.begin(), 1.0);  // the reference
  double full = 0.0;
  for (double s : shares) {
    OMNI_RETURN_IF_ERROR(throttler.apply(0, s));
    auto p = worker.measure(o.share_batch);
    if (!p) return p.status();
    FidelityRow r;
    r.target_share = s;
    r.achieved_share = p->cpu_s >= 0.0 && p->wall_s > 0.0 ? p->cpu_s / p->wall_s : 0.0;
    r.throughput_samples_s = static_cast<double>(o.share_batch) * static_cast<double>(p->times.size()) / p->worker_wall_s;
    if (s == 1.0) full = r.throughput_samples_s;
    r.relative_throughput = full > 0.0 ? r.throughput_samples_s / full : 0.0;
    r.slowdown = r.relative_throughput > 0.0 ? 1.0 / r.relative_throughput : 0.0;
    report.fidelity.push_back(r);
    log("  share " + fmt(s) + ": achieved " + fmt(r.achieved_share) + ", " + fmt(r.throughput_samples_s) + " samples/s");
  }
  std::sort(report.fidelity.begin(), report.fidelity.end(),
            [](const FidelityRow& a, const FidelityRow& b) { return a.target_share < b.target_share; });
  return Status::ok();
}

// Starts the worker, runs both sweeps and stops it.
Status measure(const CalibrationOptions& o, const std::string& exe, const std::string& data_dir,
               CgroupThrottler* throttler, const Log& log, CalibrationReport& report) {
  CalibrationWorker worker(o, throttler);
  OMNI_RETURN_IF_ERROR(worker.start(exe, data_dir, report));
  Status st = batch_sweep(worker, o, log, report);
  if (st.is_ok() && throttler) st = share_sweep(worker, *throttler, o, log, report);
  worker.quit();
  return st;
}

}  // namespace

Result<CalibrationReport> run_calibration(const CalibrationOptions& o) {
  const Log log = o.log ? o.log : [](const std::string&) {};
  OMNI_RETURN_IF_ERROR(check_options(o));
  const std::string exe = o.worker_executable.empty() ? default_worker_executable() : o.worker_executable;
  if (::access(exe.c_str(), X_OK) != 0) return Status::not_found("worker program " + exe + " not found or not executable");
  const scenarios::EmulatorSpec& settings = o.settings;
  const std::string cache = settings.cache_dir.empty() ? default_dataset_cache_dir() : settings.cache_dir;
  // Fashion-MNIST unless the settings bring their own data.
  auto data_dir = settings.train_data.empty() ? prepare_fashion_mnist(settings.data_source, cache) : Result<std::string>(cache);
  if (!data_dir) return data_dir.status();
  CalibrationReport report;
  const std::unique_ptr<CgroupThrottler> throttler = make_throttler(o, log, report);
  const Status measured = measure(o, exe, *data_dir, throttler.get(), log, report);
  if (throttler) (void)throttler->remove();
  if (!measured.is_ok()) return measured;
  return report;
}

scenarios::ModelProfile calibrated_profile(const CalibrationReport& r, const std::string& name) {
  const double fixed = std::max(0.0, r.fit.fixed);
  const double per_sample = std::max(1e-12, r.fit.per_unit);
  const double flops_per_sample = 3.0 * 2.0 * r.forward_macs;  // forward + backward ~ 3 forward passes
  scenarios::ModelProfile p;
  p.name = name;
  p.parameters = static_cast<double>(r.parameters);
  p.gradient_bytes = 4.0 * p.parameters;
  p.flops_per_sample = six_digits(flops_per_sample);
  p.flops_per_iteration = six_digits(fixed / per_sample * flops_per_sample);
  p.measured_fixed_s = six_digits(fixed);
  p.measured_per_sample_s = six_digits(per_sample);
  return p;
}

std::string profile_yaml(const CalibrationReport& r, const std::string& name) {
  char host[256] = "host";
  (void)::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string batches;
  for (std::size_t i = 0; i < r.batches.size(); ++i) batches += (i ? "," : "") + std::to_string(r.batches[i].batch);
  const std::string comment =
      "Measured by `omnilearn calibrate` on " + std::string(host) + " (" + date + "): forward+backward of the\n"
      "testbed's " + r.network + " network (the BSP worker's compute step), " + std::to_string(r.threads) +
      " thread, full core" +
      (r.sample_cost_s > 0.0 ? ", emulated cost " + fmt(r.sample_cost_s) + " CPU s per sample (emulator.sample_cost_s)"
                             : std::string()) +
      "; t = measured_fixed_s + measured_per_sample_s * b fitted (relative\n"
      "residuals) to each batch's fastest step over batches " + batches + " (R^2 = " + fmt(r.fit.r2) +
      (r.threads == 1 ? std::string("; a step's CPU time, its time on a full core") : std::string()) +
      "). flops_per_sample = 3 x forward MACs x 2" +
      (r.network.starts_with("torchscript") ? std::string(" (forward MACs estimated as the module's parameter count)")
                                            : std::string()) + "; flops_per_iteration is the\n"
      "fixed cost at the measured speed (measured_fixed_s / measured_per_sample_s * flops_per_sample).";
  return scenarios::model_profile_yaml(calibrated_profile(r, name), comment);
}

std::string fidelity_csv(const CalibrationReport& r) {
  std::string out = "target_share,achieved_share,throughput_samples_s,relative_throughput,slowdown\n";
  for (const FidelityRow& f : r.fidelity) {
    out += fmt(f.target_share) + "," + fmt(f.achieved_share) + "," + fmt(f.throughput_samples_s) + "," +
           fmt(f.relative_throughput) + "," + fmt(f.slowdown) + "\n";
  }
  return out;
}

}  // namespace omnilearn::emulator
