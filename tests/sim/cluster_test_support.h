// Helpers for the multi-job simulator's tests (sim/cluster_simulation.h): a device table of two kinds, clusters of
// one kind, resnet18 jobs, a run in a forked child (one SimGrid engine per process) and a cell of jobs.csv.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/sim/cluster_simulation.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"
#include "sim_test_support.h"

namespace omnilearn::sim::testing {

// Two kinds: "fast" trains resnet18 at 320 samples/s per device, "slow" at 160, whatever the batch.
inline traces::DeviceSpeedTable table() {
  std::vector<traces::DeviceKind> kinds = {{"fast", 10.0, 16.0, ""}, {"slow", 5.0, 16.0, ""}};
  std::vector<traces::SpeedPoint> points;
  for (const std::int64_t b : {8, 64}) {
    points.push_back({"resnet18", "cifar10", "fast", b, 320.0, "test"});
    points.push_back({"resnet18", "cifar10", "slow", b, 160.0, "test"});
  }
  return std::move(traces::DeviceSpeedTable::create(kinds, points)).value();
}

// `nodes` nodes of `gpus` devices of `kind`, each node's link 1e9 B/s with no latency.
inline scenarios::DeviceGroup group(const std::string& kind, std::int64_t nodes, std::int64_t gpus) {
  scenarios::DeviceGroup g;
  g.device = kind;
  g.nodes = nodes;
  g.gpus_per_node = gpus;
  g.bandwidth_Bps = 1e9;
  g.latency_s = 0.0;
  return g;
}

inline scenarios::DeviceCluster cluster(std::int64_t nodes, std::int64_t gpus, const std::string& kind = "fast") {
  scenarios::DeviceCluster c;
  c.name = "test";
  c.groups.push_back(group(kind, nodes, gpus));
  return c;
}

// A rigid BSP resnet18 job on CIFAR-10 of `samples` samples (one epoch).
inline traces::JobSpec job(const std::string& name, double arrival_s, std::int64_t workers, std::int64_t samples,
                           std::int64_t global_batch) {
  traces::JobSpec j;
  j.name = name;
  j.arrival_s = arrival_s;
  j.model = "resnet18";
  j.dataset = "cifar10";
  j.dataset_samples = samples;
  j.epochs = 1;
  j.workers = j.min_workers = j.max_workers = workers;
  j.global_batch = global_batch;
  return j;
}

// Runs in a forked child writing `dir`, with table()'s speeds; the child's error message, empty on success.
inline std::string run_jobs(const std::vector<traces::JobSpec>& jobs, const scenarios::DeviceCluster& c,
                            ClusterSimOptions options, const std::string& dir) {
  options.output_dir = dir;
  std::filesystem::create_directories(dir);
  return run_forked([&] {
    const auto speeds = table();
    auto result = run_cluster_simulation(jobs, c, speeds, options);
    return result.is_ok() ? std::string() : result.status().message();
  });
}

// jobs.csv's `column` of job `job_name`, as a number.
inline double cell(const std::vector<CsvRow>& rows, const std::string& job_name, const std::string& column) {
  for (const CsvRow& r : rows) {
    if (r.at("job") == job_name) return std::stod(r.at(column));
  }
  ADD_FAILURE() << "no job " << job_name;
  return -1.0;
}

}  // namespace omnilearn::sim::testing
