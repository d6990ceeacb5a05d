#include "omnilearn/emulator/emulator_config.h"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "omnilearn/base/format.h"

namespace omnilearn::emulator {

namespace {

// The user's model and data files exist (named by their field).
Status check_user_files(const scenarios::Scenario& s) {
  const std::pair<const char*, const std::string*> files[] = {
      {"emulator.model_file", &s.emulator.model_file},
      {"emulator.train_data", &s.emulator.train_data},
      {"emulator.test_data", &s.emulator.test_data}};
  for (const auto& [field, path] : files) {
    if (path->empty()) continue;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(s.resolve_path(*path), ec)) {
      return Status::not_found(std::string(field) + ": " + s.resolve_path(*path) + " is not a readable file");
    }
  }
  return Status::ok();
}

}  // namespace

Result<Network> resolve_network(const scenarios::Scenario& s) {
  if (!s.emulator.model_file.empty()) return Network::kTorchScript;
  if (s.emulator.network != Network::kFromModel) return s.emulator.network;
  const std::string& model = s.workload.model.name;
  if (model.starts_with("lenet")) return Network::kLeNet;
  if (model.starts_with("resnet")) return Network::kResNet;
  return Status::invalid_argument("workload.model: the testbed trains a LeNet-sized CNN or a small ResNet; name the "
                                  "model profile lenet... or resnet..., or set emulator.network (got \"" + model + "\")");
}

double gloo_timeout_s(const scenarios::EmulatorSpec& settings) {
  return settings.stall_timeout_s > 0.0 ? std::max(10.0, 2.0 * settings.stall_timeout_s) : 300.0;
}

double cpu_scale(const scenarios::Scenario& s) {
  const scenarios::EmulatorSpec& c = s.emulator;
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

std::vector<double> worker_cpu_shares(const scenarios::Scenario& s) {
  const double scale = cpu_scale(s);
  std::vector<double> shares;
  for (const auto& node : s.cluster.workers) shares.push_back(node.cores * scale);
  return shares;
}

int threads_for_share(double cores) { return std::max(1, static_cast<int>(std::ceil(cores - 1e-9))); }

Status validate_for_testbed(const scenarios::Scenario& s, int host_cpus) {
  const scenarios::EmulatorSpec& c = s.emulator;
  OMNI_RETURN_IF_ERROR(check_user_files(s));
  if (s.emulator.train_data.empty() && s.workload.dataset != "fashion-mnist") {
    return Status::invalid_argument("workload.dataset: the testbed trains on fashion-mnist, or on your tensor files "
                                    "(emulator.train_data and test_data) (got \"" + s.workload.dataset + "\")");
  }
  if (s.worker_count() < 1) return Status::invalid_argument("cluster: no workers");
  // On a GPU the shares become MPS percentages of the one GPU: no host-CPU fit to check (the launcher probes CUDA).
  if (c.device == Device::kCuda) return Status::ok();
  OMNI_RETURN_IF_ERROR(resolve_network(s).status());
  const auto shares = worker_cpu_shares(s);
  const double scale = cpu_scale(s);
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
