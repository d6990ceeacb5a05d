#include "cli/validate_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "omnilearn/base/format.h"

namespace omnilearn::cli {
namespace {

constexpr long long kWarmupSteps = 10;  // as analysis/omnilearn_analysis/validate.py

// A number `key: value` from the calibrated profile (0 when absent).
double profile_number(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::atof(line.c_str() + key.size() + 1);
  }
  return 0.0;
}

struct StepTimings {
  double exchange_s = 0.0;
  double compute_cv = 0.0;
  double compute_shared = 0.0;
  std::vector<double> compute_std_s;  // per worker id (0 for a worker with fewer than two steps)
};

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

// From iterations.csv, start-up steps and the steps around evaluations left out: the mean over steps of the last
// arrival's all-reduce (per step, the smallest comm_s + wait_s of any worker), the mean over workers of the
// coefficient of variation of compute_s, and the mean over pairs of workers of their compute times' correlation.
StepTimings step_timings(const fs::path& run) {
  std::set<long long> skip;
  {
    std::ifstream ev(run / "evaluations.csv");
    std::string line;
    std::getline(ev, line);
    while (std::getline(ev, line)) {
      const auto comma = line.find(',');
      if (comma == std::string::npos) continue;
      const long long step = std::atoll(line.c_str() + comma + 1);  // time_s,step,...
      skip.insert(step);
      skip.insert(step + 1);
    }
  }
  std::ifstream in(run / "iterations.csv");
  std::string line;
  if (!std::getline(in, line)) return {};
  std::vector<std::string> header;
  for (std::stringstream ss(line); std::getline(ss, line, ',');) header.push_back(line);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? std::size_t{0} : static_cast<std::size_t>(it - header.begin()) + 1;  // 0: absent
  };
  const std::size_t c_worker = column("worker"), c_step = column("step"), c_compute = column("compute_s"),
                    c_comm = column("comm_s"), c_wait = column("wait_s"), c_batch = column("batch");
  if (c_worker == 0 || c_step == 0 || c_compute == 0 || c_comm == 0 || c_wait == 0) return {};
  std::map<long long, double> last_arrival;
  std::map<long long, std::map<long long, double>> computes;  // per worker, per step
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    for (std::stringstream ss(line); std::getline(ss, line, ',');) cells.push_back(line);
    if (cells.size() < std::max({c_worker, c_step, c_compute, c_comm, c_wait, c_batch})) continue;  // (trailing empties dropped)
    const long long step = std::atoll(cells[c_step - 1].c_str());
    if (step < kWarmupSteps || skip.count(step) > 0) continue;
    if (c_batch != 0 && std::atoll(cells[c_batch - 1].c_str()) == 0) continue;  // a down worker idles, no exchange
    const double exchange = std::atof(cells[c_comm - 1].c_str()) + std::atof(cells[c_wait - 1].c_str());
    auto [it, fresh] = last_arrival.emplace(step, exchange);
    if (!fresh) it->second = std::min(it->second, exchange);
    computes[std::atoll(cells[c_worker - 1].c_str())][step] = std::atof(cells[c_compute - 1].c_str());
  }
  StepTimings t;
  if (last_arrival.empty()) return t;
  for (const auto& [step, x] : last_arrival) t.exchange_s += x;
  t.exchange_s /= static_cast<double>(last_arrival.size());
  int workers = 0;
  for (const auto& [worker, by_step] : computes) {
    if (by_step.size() < 2) continue;
    double mean = 0.0, var = 0.0;
    for (const auto& [step, x] : by_step) mean += x;
    mean /= static_cast<double>(by_step.size());
    for (const auto& [step, x] : by_step) var += (x - mean) * (x - mean);
    var /= static_cast<double>(by_step.size() - 1);
    if (worker >= 0 && worker < 1 << 20) {
      t.compute_std_s.resize(std::max(t.compute_std_s.size(), static_cast<std::size_t>(worker) + 1), 0.0);
      t.compute_std_s[static_cast<std::size_t>(worker)] = std::sqrt(var);
    }
    if (mean > 0.0) t.compute_cv += std::sqrt(var) / mean, ++workers;
  }
  if (workers > 0) t.compute_cv /= workers;
  int pairs = 0;
  for (auto a = computes.begin(); a != computes.end(); ++a) {
    for (auto b = std::next(a); b != computes.end(); ++b) t.compute_shared += correlation(a->second, b->second), ++pairs;
  }
  if (pairs > 0) t.compute_shared = std::clamp(t.compute_shared / pairs, 0.0, 1.0);
  return t;
}

}  // namespace

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<TestbedFacts> read_testbed(const fs::path& run) {
  TestbedFacts f;
  try {
    const auto manifest = nlohmann::json::parse(read_text(run / "manifest.json"));
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
    for (const auto& setting : manifest.value("emulator", nlohmann::json::array())) {
      const std::string s = setting.get<std::string>();
      if (s.rfind("cpu_period_s=", 0) == 0) f.quota_period_s = std::stod(s.substr(13));
      if (s.rfind("throttle=", 0) == 0) f.quota_holds_comm = s.substr(9) == "process";
    }
    // What the launcher did (newer runs) wins over what was asked (cgroup v2 cannot split the threads).
    if (manifest.contains("comm_unthrottled")) f.quota_holds_comm = !manifest.at("comm_unthrottled").get<bool>();
    const auto summary = nlohmann::json::parse(read_text(run / "summary.json"));
    f.iterations = summary.at("iterations").get<long long>();
    const StepTimings timings = step_timings(run);
    f.exchange_s = timings.exchange_s;
    f.compute_cv = timings.compute_cv;
    f.compute_shared = timings.compute_shared;
    f.compute_std_s = timings.compute_std_s;
    f.compute_std_s.resize(f.cpu_shares.size(), 0.0);
  } catch (const std::exception& e) {
    return Status::parse_error(run.string() + ": not a complete testbed run folder (" + e.what() + ")");
  }
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

Status write_sim_profile(const fs::path& calibration, const TestbedFacts& tb, const SimProfileTerms& terms,
                         const fs::path& out) {
  const double share_batch = terms.share_batch;
  std::error_code ec;
  const fs::path profile = fs::is_directory(calibration, ec) ? calibration / "profile.yaml" : calibration;
  if (!fs::is_regular_file(profile, ec)) return Status::not_found(profile.string() + ": no calibrated profile");
  std::string text = read_text(profile);
  const double law_s = profile_number(text, "measured_fixed_s") + share_batch * profile_number(text, "measured_per_sample_s");
  if (!(law_s > 0.0)) return Status::invalid_argument(profile.string() + ": needs measured_fixed_s and measured_per_sample_s");
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "# Added by `omnilearn validate`: the testbed's CPU shares and quota.\nhost_core_flops: " +
          format_g(tb.host_core_flops, 9) + "\n";
  std::vector<std::string> shares, slowdowns;
  std::ifstream fidelity(profile.parent_path() / "fidelity.csv");
  std::string line;
  std::getline(fidelity, line);  // target_share,achieved_share,throughput_samples_s,relative_throughput,slowdown
  while (std::getline(fidelity, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    const double target = std::atof(cells.empty() ? "0" : cells[0].c_str());
    const double achieved = cells.size() >= 5 ? std::atof(cells[1].c_str()) : 0.0;
    const double throughput = cells.size() >= 5 ? std::atof(cells[2].c_str()) : 0.0;
    double slowdown = 0.0;
    if (terms.continuous_slowdown) {
      slowdown = throughput > 0.0 ? share_batch / throughput / law_s : 0.0;
    } else {
      slowdown = target >= 1.0 ? 1.0 : (achieved > 0.0 ? 1.0 / achieved : 0.0);
    }
    if (!(slowdown > 0.0)) continue;
    shares.push_back(cells[0]);
    slowdowns.push_back(format_g(slowdown, 4));
  }
  if (!shares.empty()) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    text += "cpu_slowdown: {share: [" + join(shares) + "], slowdown: [" + join(slowdowns) + "]}\n";
  } else {
    std::cerr << "omnilearn validate: no fidelity.csv next to " << profile << ": the simulator assumes a linear quota\n";
  }
  text += "quota_period_s: " + format_g(tb.quota_period_s, 6) + "\n";
  text += std::string("quota_holds_comm: ") + (tb.quota_holds_comm ? "true" : "false") + "\n";
  text += "allreduce_fixed_s: " + format_g(terms.allreduce_fixed_s, 6) + "\n";
  if (terms.compute_jitter_cv > 0.0) text += "compute_jitter_cv: " + format_g(terms.compute_jitter_cv, 4) + "\n";
  if (!terms.noise_shares.empty()) {
    std::string noise_shares, noise_stds;
    for (std::size_t i = 0; i < terms.noise_shares.size(); ++i) {
      noise_shares += (i == 0 ? "" : ", ") + format_g(terms.noise_shares[i], 6);
      noise_stds += (i == 0 ? "" : ", ") + format_g(terms.noise_std_s[i], 4);
    }
    text += "compute_noise: {share: [" + noise_shares + "], std_s: [" + noise_stds + "]}\n";
  }
  if (terms.compute_jitter_cv > 0.0 || !terms.noise_shares.empty()) {
    text += "compute_jitter_shared: " + format_g(terms.compute_jitter_shared, 3) + "\n";
  }
  if (terms.available_cores > 0.0) text += "host_cpu_available: " + format_g(terms.available_cores, 4) + "\n";
  std::ofstream o(out);
  o << text;
  return o ? Status::ok() : Status::io_error(out.string() + ": cannot write");
}

}  // namespace omnilearn::cli
