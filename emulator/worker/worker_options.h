// What the launcher tells one worker process (command-line arguments of omnilearn-emulate-worker). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"

namespace omnilearn::emulator::worker {

struct WorkerOptions {
  std::string scenario_path;
  std::vector<std::string> overrides;  // --set, as the launcher got them
  int rank = 0;
  int world = 1;
  int port = 0;                        // TCPStore port on 127.0.0.1 (rank 0 serves it)
  long long t0_ns = 0;                 // the run's start on the steady clock (CLOCK_MONOTONIC, shared by processes)
  int out_fd = -1;                     // records to the launcher (worker_protocol.h)
  int in_fd = -1;                      // notices from the launcher (rank 0 reads availability changes)
  int threads = 1;
  std::string data_dir;                // decompressed Fashion-MNIST
  EmulatorConfig config;
};

Result<WorkerOptions> parse_worker_args(const std::vector<std::string>& args);

// The BSP worker (Torch): trains until the stopping rule, reporting to out_fd. Returns the process exit code.
int run_bsp_worker(const WorkerOptions& options);

}  // namespace omnilearn::emulator::worker
