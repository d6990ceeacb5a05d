#include "omnilearn/emulator/emulator_config.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "omnilearn/base/format.h"

namespace omnilearn::emulator {
namespace {

Status parse_double(std::string_view key, std::string_view text, double& out) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0.0) {
    return Status::invalid_argument(std::string("emulator.").append(key).append(": expected a number >= 0, got \"")
                                        .append(s).append("\""));
  }
  out = v;
  return Status::ok();
}

Status parse_int(std::string_view key, std::string_view text, std::int64_t& out) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    return Status::invalid_argument(std::string("emulator.").append(key).append(": expected an integer >= 0, got \"")
                                        .append(text).append("\""));
  }
  out = v;
  return Status::ok();
}

}  // namespace

Status apply_setting(EmulatorConfig& c, std::string_view setting) {
  const auto eq = setting.find('=');
  if (eq == std::string_view::npos) {
    return Status::invalid_argument(std::string("emulator setting \"").append(setting).append("\": expected key=value"));
  }
  const std::string_view key = setting.substr(0, eq);
  const std::string_view value = setting.substr(eq + 1);
  if (key == "network") {
    if (value == "lenet") c.network = Network::kLeNet;
    else if (value == "resnet") c.network = Network::kResNet;
    else return Status::invalid_argument(std::string("emulator.network: expected lenet or resnet, got \"").append(value).append("\""));
    return Status::ok();
  }
  if (key == "device") {
    if (value == "cpu") c.device = Device::kCpu;
    else if (value == "cuda") c.device = Device::kCuda;
    else return Status::invalid_argument(std::string("emulator.device: expected cpu or cuda, got \"").append(value).append("\""));
    return Status::ok();
  }
  if (key == "lr_scaling") {
    if (value != "true" && value != "false") return Status::invalid_argument("emulator.lr_scaling: expected true or false");
    c.lr_scaling = value == "true";
    return Status::ok();
  }
  if (key == "throttle") {
    if (value != "compute" && value != "process") {
      return Status::invalid_argument(std::string("emulator.throttle: expected compute or process, got \"").append(value).append("\""));
    }
    c.throttle_compute_only = value == "compute";
    return Status::ok();
  }
  if (key == "cpuset") { c.cpuset = std::string(value); return Status::ok(); }
  if (key == "data_source") { c.data_source = std::string(value); return Status::ok(); }
  if (key == "cache_dir") { c.cache_dir = std::string(value); return Status::ok(); }
  if (key == "eval_every") return parse_int(key, value, c.eval_every);
  if (key == "eval_samples") return parse_int(key, value, c.eval_samples);
  if (key == "warmup_updates") return parse_int(key, value, c.warmup_updates);
  struct DoubleField { const char* name; double EmulatorConfig::*field; };
  static constexpr DoubleField kDoubles[] = {
      {"cpu_budget", &EmulatorConfig::cpu_budget},     {"cpu_per_core", &EmulatorConfig::cpu_per_core},
      {"cpu_period_s", &EmulatorConfig::cpu_period_s}, {"learning_rate", &EmulatorConfig::learning_rate},
      {"momentum", &EmulatorConfig::momentum},         {"target_accuracy", &EmulatorConfig::target_accuracy},
      {"time_budget_s", &EmulatorConfig::time_budget_s}, {"stop_grace_s", &EmulatorConfig::stop_grace_s},
      {"sample_cost_s", &EmulatorConfig::sample_cost_s},
      {"stall_timeout_s", &EmulatorConfig::stall_timeout_s}};
  for (const DoubleField& f : kDoubles) {
    if (key == f.name) return parse_double(key, value, c.*(f.field));
  }
  return Status::invalid_argument(std::string("emulator.").append(key).append(
      ": unknown setting (expected network, device, cpu_budget, cpu_per_core, cpu_period_s, throttle, cpuset, "
      "learning_rate, "
      "momentum, lr_scaling, warmup_updates, target_accuracy, eval_every, eval_samples, time_budget_s, data_source, "
      "cache_dir, "
      "stop_grace_s, sample_cost_s, stall_timeout_s)"));
}

std::vector<std::string> to_settings(const EmulatorConfig& c) {
  return {std::string("network=").append(c.network == Network::kLeNet ? "lenet" : "resnet"),
          std::string("device=").append(c.device == Device::kCpu ? "cpu" : "cuda"),
          std::string("cpu_budget=").append(format_g(c.cpu_budget)),
          std::string("cpu_per_core=").append(format_g(c.cpu_per_core)),
          std::string("cpu_period_s=").append(format_g(c.cpu_period_s)),
          std::string("throttle=").append(c.throttle_compute_only ? "compute" : "process"),
          std::string("cpuset=").append(c.cpuset),
          std::string("learning_rate=").append(format_g(c.learning_rate)),
          std::string("momentum=").append(format_g(c.momentum)),
          std::string("lr_scaling=").append(c.lr_scaling ? "true" : "false"),
          std::string("warmup_updates=").append(std::to_string(c.warmup_updates)),
          std::string("target_accuracy=").append(format_g(c.target_accuracy)),
          std::string("eval_every=").append(std::to_string(c.eval_every)),
          std::string("eval_samples=").append(std::to_string(c.eval_samples)),
          std::string("time_budget_s=").append(format_g(c.time_budget_s)),
          std::string("data_source=").append(c.data_source),
          std::string("cache_dir=").append(c.cache_dir),
          std::string("stop_grace_s=").append(format_g(c.stop_grace_s)),
          std::string("sample_cost_s=").append(format_g(c.sample_cost_s)),
          std::string("stall_timeout_s=").append(format_g(c.stall_timeout_s))};
}

Result<Network> network_for_model(const std::string& model_name) {
  if (model_name.starts_with("lenet")) return Network::kLeNet;
  if (model_name.starts_with("resnet")) return Network::kResNet;
  return Status::invalid_argument("workload.model: the testbed trains a LeNet-sized CNN or a small ResNet; name the "
                                  "model profile lenet... or resnet... (got \"" + model_name + "\")");
}

Result<EmulatorConfig> config_from_scenario(const scenarios::Scenario& s) {
  EmulatorConfig c;
  const scenarios::EmulatorSpec& e = s.emulator;
  if (e.network.empty()) {
    auto network = network_for_model(s.workload.model.name);
    if (!network) return network.status();
    c.network = *network;
  } else {
    c.network = e.network == "resnet" ? Network::kResNet : Network::kLeNet;
  }
  c.cpu_budget = e.cpu_budget;
  c.cpu_per_core = e.cpu_per_core;
  c.cpu_period_s = e.cpu_period_s;
  c.throttle_compute_only = e.throttle == "compute";
  c.target_accuracy = e.target_accuracy;
  c.eval_every = e.eval_every;
  c.eval_samples = e.eval_samples;
  c.time_budget_s = e.time_budget_s;
  c.learning_rate = e.learning_rate;
  c.momentum = e.momentum;
  c.warmup_updates = e.warmup_updates;
  c.sample_cost_s = e.sample_cost_s;
  c.stall_timeout_s = e.stall_timeout_s;
  return c;
}

double gloo_timeout_s(const EmulatorConfig& config) {
  return config.stall_timeout_s > 0.0 ? std::max(10.0, 2.0 * config.stall_timeout_s) : 300.0;
}

double cpu_scale(const scenarios::Scenario& s, const EmulatorConfig& c) {
  if (c.cpu_per_core > 0.0) return c.cpu_per_core;
  const std::size_t n = s.worker_count();
  double peak = 0.0;
  for (std::size_t k = 0; k < n; ++k) peak += s.cluster.workers[k].cores;
  if (s.availability.kind == scenarios::AvailabilitySpec::Kind::kSchedule && !s.availability.phases.empty()) {
    peak = 0.0;
    for (const auto& phase : s.availability.phases) {
      double total = 0.0;
      for (std::size_t k = 0; k < n && k < phase.fractions.size(); ++k) {
        total += phase.fractions[k] * s.cluster.workers[k].cores;
      }
      peak = std::max(peak, total);
    }
  }
  return peak > 0.0 ? c.cpu_budget / peak : 1.0;
}

std::vector<double> worker_cpu_shares(const scenarios::Scenario& s, const EmulatorConfig& c) {
  const double scale = cpu_scale(s, c);
  std::vector<double> shares;
  for (const auto& node : s.cluster.workers) shares.push_back(node.cores * scale);
  return shares;
}

int threads_for_share(double cores) { return std::max(1, static_cast<int>(std::ceil(cores - 1e-9))); }

Status validate_for_testbed(const scenarios::Scenario& s, const EmulatorConfig& c, int host_cpus) {
  if (s.workload.dataset != "fashion-mnist") {
    return Status::invalid_argument("workload.dataset: the testbed trains on fashion-mnist (got \"" + s.workload.dataset + "\")");
  }
  if (s.worker_count() < 1) return Status::invalid_argument("cluster: no workers");
  // On a GPU the shares become MPS percentages of the one GPU: no host-CPU fit to check (the launcher probes CUDA).
  if (c.device == Device::kCuda) return Status::ok();
  const auto shares = worker_cpu_shares(s, c);
  const double scale = cpu_scale(s, c);
  double peak = 0.0;
  if (s.availability.kind == scenarios::AvailabilitySpec::Kind::kSchedule && !s.availability.phases.empty()) {
    peak = c.cpu_per_core > 0.0 ? 0.0 : c.cpu_budget;
    if (c.cpu_per_core > 0.0) {
      for (const auto& phase : s.availability.phases) {
        double total = 0.0;
        for (std::size_t k = 0; k < shares.size() && k < phase.fractions.size(); ++k) total += phase.fractions[k] * shares[k];
        peak = std::max(peak, total);
      }
    }
  } else {
    peak = std::accumulate(shares.begin(), shares.end(), 0.0);
  }
  if (peak > host_cpus + 1e-9) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "the scenario asks for %.3f CPUs at once (scale %.4f host cores per scenario core) "
                  "but this host has %d", peak, scale, host_cpus);
    return Status::invalid_argument(buf);
  }
  for (std::size_t k = 0; k < shares.size(); ++k) {
    if (shares[k] > host_cpus + 1e-9) {
      return Status::invalid_argument("cluster.nodes[" + std::to_string(k) + "]: its CPU share exceeds the host's " +
                                      std::to_string(host_cpus) + " CPUs");
    }
  }
  return Status::ok();
}

int host_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace omnilearn::emulator
