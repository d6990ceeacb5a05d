#include "omnilearn/emulator/validation.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "omnilearn/base/format.h"
#include "omnilearn/scenarios/model_profile_file.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/scenario_json.h"
#include "omnilearn/traces/csv_table.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

constexpr long long kWarmupSteps = 10;  // as analysis/omnilearn_analysis/validate.py

// `v` to `significant` digits: what the measurement carries, and what the profile file then shows.
double rounded(double v, int significant) { return std::strtod(format_g(v, significant).c_str(), nullptr); }

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);  // throws on a missing or broken file
}

// A run's table; rows cut short are skipped, as a worker stopped mid-line leaves one.
Result<traces::CsvTable> open_table(const fs::path& path) {
  return traces::CsvTable::open(path.string(), traces::RaggedRows::kSkip);
}

// Each evaluated step and the one after it (evaluations.csv; none when the run has no such file).
Result<std::set<long long>> evaluation_steps(const fs::path& run) {
  std::set<long long> steps;
  std::error_code ec;
  if (!fs::exists(run / "evaluations.csv", ec)) return steps;
  auto table = open_table(run / "evaluations.csv");
  if (!table) return table.status();
  auto c_step = table->column("step");
  if (!c_step) return c_step.status();
  while (table->next()) {
    auto step = table->number(*c_step);
    if (!step) return step.status();
    steps.insert(static_cast<long long>(*step));
    steps.insert(static_cast<long long>(*step) + 1);
  }
  OMNI_RETURN_IF_ERROR(table->status());
  return steps;
}

// The timed steps of a run: per step the last arrival's all-reduce (the smallest comm_s + wait_s of any worker),
// and per worker its compute_s by step.
struct StepSamples {
  std::map<long long, double> last_arrival;
  std::map<long long, std::map<long long, double>> computes;
};

Result<StepSamples> step_samples(const fs::path& run, const std::set<long long>& skip) {
  auto table = open_table(run / "iterations.csv");
  if (!table) return table.status();
  auto columns = table->columns({"worker", "step", "compute_s", "comm_s", "wait_s", "batch"});
  if (!columns) return columns.status();
  const std::vector<std::size_t>& c = *columns;
  StepSamples s;
  std::vector<double> v(c.size());
  while (table->next()) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      auto x = table->number(c[i]);
      if (!x) return x.status();
      v[i] = *x;
    }
    const auto step = static_cast<long long>(v[1]);
    if (step < kWarmupSteps || skip.count(step) > 0) continue;
    if (v[5] == 0.0) continue;  // a down worker idles, no exchange
    const double exchange = v[3] + v[4];
    auto [it, fresh] = s.last_arrival.emplace(step, exchange);
    if (!fresh) it->second = std::min(it->second, exchange);
    s.computes[static_cast<long long>(v[0])][step] = v[2];
  }
  OMNI_RETURN_IF_ERROR(table->status());
  return s;
}

// The correlation of two workers' compute times over the steps both have (0 when undefined).
double correlation(const std::map<long long, double>& a, const std::map<long long, double>& b) {
  std::vector<std::pair<double, double>> xy;
  for (const auto& [step, x] : a) {
    if (auto it = b.find(step); it != b.end()) xy.emplace_back(x, it->second);
  }
  if (xy.size() < 3) return 0.0;
  double mx = 0.0, my = 0.0;
  for (const auto& [x, y] : xy) mx += x, my += y;
  mx /= static_cast<double>(xy.size()), my /= static_cast<double>(xy.size());
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (const auto& [x, y] : xy) sxy += (x - mx) * (y - my), sxx += (x - mx) * (x - mx), syy += (y - my) * (y - my);
  return sxx > 0.0 && syy > 0.0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

// Sets the step timings of `f`: the mean over steps of the last arrival's all-reduce, per worker the standard
// deviation of compute_s and the mean over workers of its coefficient of variation, and the mean over pairs of
// workers of their compute times' correlation.
void set_step_timings(const StepSamples& s, TestbedFacts& f) {
  if (s.last_arrival.empty()) return;
  for (const auto& [step, x] : s.last_arrival) f.exchange_s += x;
  f.exchange_s /= static_cast<double>(s.last_arrival.size());
  int workers = 0;
  for (const auto& [worker, by_step] : s.computes) {
    if (by_step.size() < 2) continue;
    double mean = 0.0, var = 0.0;
    for (const auto& [step, x] : by_step) mean += x;
    mean /= static_cast<double>(by_step.size());
    for (const auto& [step, x] : by_step) var += (x - mean) * (x - mean);
    var /= static_cast<double>(by_step.size() - 1);
    if (worker >= 0 && static_cast<std::size_t>(worker) < f.compute_std_s.size()) {
      f.compute_std_s[static_cast<std::size_t>(worker)] = std::sqrt(var);
    }
    if (mean > 0.0) f.compute_cv += std::sqrt(var) / mean, ++workers;
  }
  if (workers > 0) f.compute_cv /= workers;
  int pairs = 0;
  for (auto a = s.computes.begin(); a != s.computes.end(); ++a) {
    for (auto b = std::next(a); b != s.computes.end(); ++b) f.compute_shared += correlation(a->second, b->second), ++pairs;
  }
  if (pairs > 0) f.compute_shared = std::clamp(f.compute_shared / pairs, 0.0, 1.0);
}

// The manifest's facts: each worker's CPU share and the host core's scenario speed, the quota period and whether
// the quota holds the all-reduce.
Status read_manifest(const fs::path& run, TestbedFacts& f) {
  const auto manifest = read_json(run / "manifest.json");
  const auto& shares = manifest.at("cpu_shares");
  const auto& workers = manifest.at("scenario").at("cluster").at("workers");
  if (shares.size() != workers.size() || shares.empty()) {
    return Status::parse_error((run / "manifest.json").string() + ": cpu_shares does not match cluster.workers");
  }
  // Shares are scenario speeds times one scale, so speed / share is the same for every worker: one host core.
  for (std::size_t k = 0; k < shares.size(); ++k) {
    const double ratio = workers[k].at("speed_flops").get<double>() / shares[k].get<double>();
    if (k > 0 && std::abs(ratio - f.host_core_flops) > 1e-6 * f.host_core_flops) {
      return Status::parse_error((run / "manifest.json").string() +
                                 ": cpu_shares are not proportional to the workers' speed_flops");
    }
    f.host_core_flops = ratio;
    f.cpu_shares.push_back(shares[k].get<double>());
  }
  // The settings the run used (the scenario's emulator section), and what the quota held as the launcher applied
  // it: cgroup v2 cannot split the communication threads out whatever was asked.
  const auto settings = manifest.at("scenario").at("emulator").get<scenarios::EmulatorSpec>();
  f.quota_period_s = settings.cpu_period_s;
  f.quota_holds_comm = manifest.at("throttle").get<scenarios::QuotaScope>() == scenarios::QuotaScope::kProcess;
  return Status::ok();
}

// The share -> slowdown table from fidelity.csv next to `profile` (empty when there is none); `law_s` is the
// profile's step time at terms.share_batch.
Status read_slowdowns(const fs::path& profile, const SimProfileTerms& terms, double law_s, scenarios::ModelProfile& p) {
  const fs::path path = profile.parent_path() / "fidelity.csv";
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::ok();
  auto table = open_table(path);
  if (!table) return table.status();
  auto columns = table->columns({"target_share", "achieved_share", "throughput_samples_s"});
  if (!columns) return columns.status();
  const std::vector<std::size_t>& c = *columns;
  while (table->next()) {
    auto target = table->number(c[0]);
    auto achieved = table->number(c[1]);
    auto throughput = table->number(c[2]);
    for (const auto* x : {&target, &achieved, &throughput}) {
      if (!*x) return x->status();
    }
    double slowdown = 0.0;
    if (terms.continuous_slowdown) {
      slowdown = *throughput > 0.0 ? terms.share_batch / *throughput / law_s : 0.0;
    } else {
      slowdown = *target >= 1.0 ? 1.0 : (*achieved > 0.0 ? 1.0 / *achieved : 0.0);
    }
    if (!(slowdown > 0.0)) continue;
    p.slowdown_shares.push_back(*target);
    p.slowdown_factors.push_back(rounded(slowdown, 4));
  }
  return table->status();
}

// The testbed's terms of the simulator profile (all but the share -> slowdown table).
void set_testbed_terms(const TestbedFacts& tb, const SimProfileTerms& terms, scenarios::ModelProfile& p) {
  p.host_core_flops = rounded(tb.host_core_flops, 9);
  p.quota_period_s = rounded(tb.quota_period_s, 6);
  p.quota_holds_comm = tb.quota_holds_comm;
  p.allreduce_fixed_s = rounded(terms.allreduce_fixed_s, 6);
  p.compute_jitter_cv = terms.compute_jitter_cv > 0.0 ? rounded(terms.compute_jitter_cv, 4) : 0.0;
  p.noise_shares.clear();
  p.noise_std_s.clear();
  for (std::size_t i = 0; i < terms.noise_shares.size() && i < terms.noise_std_s.size(); ++i) {
    p.noise_shares.push_back(rounded(terms.noise_shares[i], 6));
    p.noise_std_s.push_back(rounded(terms.noise_std_s[i], 4));
  }
  const bool jitter = p.compute_jitter_cv > 0.0 || !p.noise_shares.empty();
  p.compute_jitter_shared = jitter ? rounded(terms.compute_jitter_shared, 3) : 0.0;
  p.host_cpu_available.reset();
  if (terms.available_cores > 0.0) p.host_cpu_available = rounded(terms.available_cores, 4);
}

// CPU seconds the whole host has spent busy (/proc/stat: all but idle and iowait); < 0 when unreadable.
double host_busy_s() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  if (!(in >> cpu) || cpu != "cpu") return -1.0;
  for (double& x : v) in >> x;
  return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds used by a cgroup folder (v1 cpuacct or v2 cpu.stat); < 0 when unreadable.
double cgroup_usage_s(const std::string& folder) {
  for (const char* mount : {"/sys/fs/cgroup/cpuacct/", "/sys/fs/cgroup/cpu,cpuacct/"}) {
    std::ifstream in(mount + folder + "/cpuacct.usage");
    double ns = 0.0;
    if (in >> ns) return ns * 1e-9;
  }
  std::ifstream in("/sys/fs/cgroup/" + folder + "/cpu.stat");
  std::string key;
  double value = 0.0;
  while (in >> key >> value) {
    if (key == "usage_usec") return value * 1e-6;
  }
  return -1.0;
}

}  // namespace

Result<TestbedFacts> read_testbed(const fs::path& run) {
  TestbedFacts f;
  try {
    OMNI_RETURN_IF_ERROR(read_manifest(run, f));
    f.iterations = read_json(run / "summary.json").at("iterations").get<long long>();
  } catch (const std::exception& e) {
    return Status::parse_error(run.string() + ": not a complete testbed run folder (" + e.what() + ")");
  }
  auto skip = evaluation_steps(run);
  if (!skip) return skip.status();
  auto samples = step_samples(run, *skip);
  if (!samples) return samples.status();
  f.compute_std_s.assign(f.cpu_shares.size(), 0.0);
  set_step_timings(*samples, f);
  return f;
}

void set_compute_noise(const TestbedFacts& run, SimProfileTerms& terms) {
  std::map<double, std::pair<double, int>> by_share;  // share -> (sum of std, workers)
  for (std::size_t k = 0; k < run.cpu_shares.size() && k < run.compute_std_s.size(); ++k) {
    if (!(run.compute_std_s[k] > 1e-9)) continue;  // it never varied (a nanosecond is rounding)
    auto& [sum, n] = by_share[run.cpu_shares[k]];
    sum += run.compute_std_s[k], ++n;
  }
  terms.noise_shares.clear();
  terms.noise_std_s.clear();
  for (const auto& [share, sum_n] : by_share) {
    terms.noise_shares.push_back(share);
    terms.noise_std_s.push_back(sum_n.first / sum_n.second);
  }
}

fs::path calibrated_profile_path(const fs::path& calibration) {
  std::error_code ec;
  return fs::is_directory(calibration, ec) ? calibration / "profile.yaml" : calibration;
}

Result<scenarios::ModelProfile> sim_profile(const fs::path& calibration, const TestbedFacts& tb,
                                            const SimProfileTerms& terms) {
  const fs::path path = calibrated_profile_path(calibration);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::not_found(path.string() + ": no calibrated profile");
  auto profile = scenarios::load_model_profile(path.string());
  if (!profile) return profile.status();
  scenarios::ModelProfile& p = *profile;
  if (!p.measured_fixed_s || !p.measured_per_sample_s) {
    return Status::invalid_argument(path.string() + ": needs measured_fixed_s and measured_per_sample_s");
  }
  const double law_s = *p.measured_fixed_s + terms.share_batch * *p.measured_per_sample_s;
  p.slowdown_shares.clear();
  p.slowdown_factors.clear();
  OMNI_RETURN_IF_ERROR(read_slowdowns(path, terms, law_s, p));
  set_testbed_terms(tb, terms, p);
  return profile;
}

Result<scenarios::ModelProfile> write_sim_profile(const fs::path& calibration, const TestbedFacts& tb,
                                                  const SimProfileTerms& terms, const fs::path& out) {
  auto profile = sim_profile(calibration, tb, terms);
  if (!profile) return profile.status();
  const std::string comment = "Written by `omnilearn validate`: the calibrated profile " +
                              calibrated_profile_path(calibration).string() +
                              "\nwith the testbed's terms: CPU shares, quota, all-reduce cost, compute noise, host load.";
  OMNI_RETURN_IF_ERROR(run::write_file_atomically(out.string(), scenarios::model_profile_yaml(*profile, comment)));
  return profile;
}

void HostLoadMeter::sample() {
  if (cgroup_folder_.empty()) {
    try {
      cgroup_folder_ = read_json(run_ / "manifest.json").value("cgroup_folder", "");
    } catch (const std::exception&) {
      return;  // not written yet
    }
  }
  const double run_s = cgroup_folder_.empty() ? -1.0 : cgroup_usage_s(cgroup_folder_);
  const double busy_s = host_busy_s();
  const double t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (run_s <= 0.0 || busy_s < 0.0) return;
  (first_ ? last_ : first_) = Reading{t_s, busy_s, run_s};  // the first with the workers started, then the latest
}

std::optional<HostLoadMeter::Load> HostLoadMeter::load() const {
  if (!first_ || !last_ || !(last_->t_s > first_->t_s + 1.0)) return std::nullopt;
  Load l;
  l.others_cores = std::max(0.0, ((last_->host_busy_s - first_->host_busy_s) - (last_->run_s - first_->run_s)) /
                                     (last_->t_s - first_->t_s));
  l.available_cores = std::max(0.05, static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)) - l.others_cores);
  return l;
}

}  // namespace omnilearn::emulator
