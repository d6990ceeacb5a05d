#include "omnilearn/emulator/testbed_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/scenario_json.h"

namespace omnilearn::emulator {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TestbedConfig, mode, seed, dataset_samples, global_batch, epochs,
                                                sample_budget, max_iterations, controller, settings, asp, asp_epochs,
                                                partition, initial_availability, world, store_file, store_host, port, bind, t0_ns, data_dir)

Result<TestbedConfig> testbed_config(const scenarios::Scenario& scenario) {
  TestbedConfig c;
  c.mode = scenario.mode;
  c.seed = scenario.seed;
  c.dataset_samples = scenario.workload.dataset_samples;
  c.global_batch = scenario.workload.global_batch;
  c.epochs = scenario.workload.epochs;
  c.sample_budget = scenario.workload.sample_budget;
  c.max_iterations = scenario.max_iterations;
  c.controller = run::controller_spec(scenario);
  c.settings = scenario.emulator;
  c.asp = scenario.workload.asp;
  c.asp_epochs = scenario.workload.asp.epochs;
  c.partition = scenario.workload.partition;
  auto network = resolve_network(scenario);
  if (!network) return network.status();
  c.settings.network = *network;
  // The workers may run elsewhere than the scenario's folder: every file by its resolved path.
  for (std::string* path : {&c.settings.model_file, &c.settings.train_data, &c.settings.test_data}) {
    if (!path->empty()) *path = std::filesystem::absolute(scenario.resolve_path(*path)).string();
  }
  c.world = static_cast<int>(scenario.worker_count());
  return c;
}

Status write_testbed_config(const TestbedConfig& config, const std::string& path) {
  return run::write_file_atomically(path, nlohmann::json(config).dump(2) + "\n");
}

Result<TestbedConfig> read_testbed_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::not_found(path + ": cannot read the testbed configuration");
  try {
    TestbedConfig config = nlohmann::json::parse(in).get<TestbedConfig>();
    if (config.world < 1 || config.settings.network == Network::kFromModel) {
      return Status::invalid_argument(path + ": not a resolved testbed configuration (world, settings.network)");
    }
    return config;
  } catch (const nlohmann::json::exception& e) {
    return Status::invalid_argument(path + ": " + e.what());
  }
}

}  // namespace omnilearn::emulator
