// Small scenario files for the emulator tests, written to a fresh temporary folder.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator::testing {

// The folders fresh_dir made in this process: removed when it exits if every test passed (kept, for a look, when
// one failed or OMNILEARN_KEEP_TEST_DIRS is set), so that the suite leaves nothing in the temporary folder.
struct FreshDirs {
  std::vector<std::filesystem::path> made;
  ~FreshDirs() {
    if (std::getenv("OMNILEARN_KEEP_TEST_DIRS") != nullptr || !::testing::UnitTest::GetInstance()->Passed()) return;
    std::error_code ec;
    for (const auto& dir : made) std::filesystem::remove_all(dir, ec);
  }
};

inline std::string fresh_dir(const std::string& name) {
  static FreshDirs dirs;
  const auto dir = std::filesystem::temp_directory_path() /
                   (std::string("omnilearn-emu-test-").append(name).append("-").append(std::to_string(::getpid())));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  dirs.made.push_back(dir);
  return dir.string();
}

// Two (or `workers`) LeNet workers on Fashion-MNIST; `extra` is appended (e.g. an availability section).
inline std::string write_scenario(const std::string& dir, const std::string& name, int workers = 2,
                                  const std::string& extra = "", int samples = 1024, int global_batch = 64,
                                  int epochs = 2) {
  std::string yaml = "seed: 3\nmode: bsp\ncluster:\n  nodes:\n";
  for (int k = 0; k < workers; ++k) {
    yaml.append("    - {name: w").append(std::to_string(k)).append(", cores: ").append(k == 0 ? "2" : "1")
        .append(", core_speed: 1e9}\n");
  }
  yaml.append("workload:\n  model: {name: lenet, parameters: 22000, flops_per_sample: 4e6}\n  dataset: fashion-mnist\n")
      .append("  dataset_samples: ").append(std::to_string(samples)).append("\n  global_batch: ")
      .append(std::to_string(global_batch)).append("\n  epochs: ").append(std::to_string(epochs)).append("\n")
      .append("policy: {name: omnilearn, min_batch: 8, max_batch: 56, every_n: 4}\n")
      .append("outputs: {dir: runs, timeline: true}\n")
      .append(extra);
  const std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << yaml;
  return path;
}

}  // namespace omnilearn::emulator::testing

namespace omnilearn::emulator {

// `scenario` with the testbed settings `settings` (what `--set emulator.<key>=` would give).
inline scenarios::Scenario with_settings(scenarios::Scenario scenario, const scenarios::EmulatorSpec& settings) {
  scenario.emulator = settings;
  return scenario;
}

}  // namespace omnilearn::emulator
