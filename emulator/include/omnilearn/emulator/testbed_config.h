// TestbedConfig: the resolved, typed configuration of one testbed run. The launcher writes it once into the run
// folder (config.json) and every worker process reads it: no worker parses the scenario or `--set` strings. Only
// what differs per process (rank, pipes, threads, thread files) travels on the worker's command line. Plain
// values: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/run/stop_rule.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

// The name of the file in the run folder.
inline constexpr const char* kTestbedConfigFile = "config.json";

struct TestbedConfig {
  // What is trained, and how long.
  controller::TrainingMode mode = controller::TrainingMode::kBsp;
  std::uint64_t seed = 1;
  std::int64_t dataset_samples = 0;
  BatchSize global_batch = 0;
  std::int64_t epochs = 1;
  std::int64_t sample_budget = 0;   // 0: train `epochs` epochs
  std::int64_t max_iterations = 0;  // 0: no cap
  run::ControllerSpec controller;
  scenarios::EmulatorSpec settings;  // `network` resolved (never kFromModel)
  scenarios::AspSpec asp;            // ASP's update, pull and server rule (workload.asp)
  scenarios::AspEpochs asp_epochs = scenarios::AspEpochs::kFloor;  // workload.asp.epochs (the barrier's count)
  scenarios::PartitionSpec partition;  // workload.partition: which samples each ASP worker holds
  std::vector<double> initial_availability;  // each worker's level at the start (run::apply_start_levels)
  // How the processes meet: the workers (Gloo ranks 0..world-1; ASP adds the server as rank `world`), the
  // rendezvous (a FileStore's file on one host, else rank 0's TCPStore on store_host:port), Gloo's address.
  int world = 1;
  std::string store_file;
  std::string store_host = "127.0.0.1";
  int port = 0;
  std::string bind = "127.0.0.1";
  long long t0_ns = 0;              // the run's start on the steady clock (CLOCK_MONOTONIC, shared by processes)
  std::string data_dir;             // decompressed Fashion-MNIST
};

// The limits of the run's stop rule (those run::stop_limits takes from the scenario).
inline run::StopLimits stop_limits(const TestbedConfig& c) {
  run::StopLimits limits;
  limits.dataset_samples = c.dataset_samples;
  limits.epochs = c.epochs;
  limits.sample_budget = c.sample_budget;
  limits.max_steps = c.max_iterations;
  limits.time_budget_s = c.settings.time_budget_s;
  limits.target_accuracy = c.settings.target_accuracy;
  return limits;
}

// The configuration of `scenario` on the testbed (network resolved); the rendezvous fields are the caller's.
Result<TestbedConfig> testbed_config(const scenarios::Scenario& scenario);

// Writes `config` to `path` atomically; errors name the file.
Status write_testbed_config(const TestbedConfig& config, const std::string& path);
// Reads a file written by write_testbed_config; errors name the file and the field.
Result<TestbedConfig> read_testbed_config(const std::string& path);

}  // namespace omnilearn::emulator
