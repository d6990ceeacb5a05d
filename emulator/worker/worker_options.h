// What the launcher tells one worker process: the run's typed configuration file, and on its command line only what
// differs per process. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/testbed_config.h"

namespace omnilearn::emulator::worker {

struct WorkerOptions {
  TestbedConfig config;                // --config: the run folder's config.json (testbed_config.h)
  int rank = 0;                        // Gloo rank: a worker id, or config.world for the ASP parameter server
  bool server = false;                 // ASP: this process is the parameter server (--server)
  bool lead = false;                   // reports training_start_s although not rank 0 (first worker of node > 0)
  int report_from = -1;                // rank 0 also reports derived rows of ranks >= this (other nodes); -1: none
  int out_fd = -1;                     // records to the launcher (worker_protocol.h)
  int in_fd = -1;                      // notices from the launcher (the process that runs the controller reads them)
  int threads = 1;
  // Where the worker writes the ids of the threads that its rendezvous starts (Gloo, the TCPStore), to run them
  // outside its CPU quota (--comm-thread-file, repeatable; the throttler's comm_thread_files). Empty: they stay.
  std::vector<std::string> comm_thread_files;
  // Where a thread goes back under the quota (--compute-thread-file): rank 0 evaluates outside it, since the
  // evaluation pause is not training time and the other workers wait idle meanwhile.
  std::vector<std::string> compute_thread_files;
};

Result<WorkerOptions> parse_worker_args(const std::vector<std::string>& args);

// The BSP worker (Torch): trains until the stopping rule, reporting to out_fd. Returns the process exit code.
int run_bsp_worker(const WorkerOptions& options);
// ASP (Torch, asp_worker.cpp): a worker that pushes gradients to the parameter server and trains on the weights
// it gets back, and the parameter server that applies them, runs the controller, evaluates and decides when to stop.
int run_asp_worker(const WorkerOptions& options);
int run_parameter_server(const WorkerOptions& options);

// `--probe-cuda` (torch_parts.cpp): prints whether this LibTorch can train on CUDA here; exit 0 if so, 3 if not.
int run_cuda_probe();

// `--calibrate` mode (calibrate_worker.cpp): a timing server for `omnilearn calibrate`.
struct CalibrateOptions {
  scenarios::EmulatorSpec settings;    // --settings: the model, its data and emulated cost (JSON, network resolved)
  int threads = 1;
  std::string data_dir;
  std::int64_t samples = 8192;         // training samples loaded (batches are drawn from them at random)
  std::uint64_t seed = 1;
  int out_fd = -1;
  int in_fd = -1;
};
Result<CalibrateOptions> parse_calibrate_args(const std::vector<std::string>& args);
int run_calibration_worker(const CalibrateOptions& options);

// `--pipeline-stage` mode (pipeline_stage.cpp): one stage process of `omnilearn emulate` on a `kind: hybrid-testbed` spec.
struct PipelineStageOptions {
  std::string config;          // --config: the run folder's pipeline.json (pipeline_protocol.h)
  std::int64_t rank = 0;       // replica x stages + stage
  int out_fd = -1;             // reports to the launcher
  int in_fd = -1;              // the launcher's go
  std::vector<std::string> comm_thread_files;  // as WorkerOptions::comm_thread_files
};
Result<PipelineStageOptions> parse_pipeline_stage_args(const std::vector<std::string>& args);
int run_pipeline_stage(const PipelineStageOptions& options);

}  // namespace omnilearn::emulator::worker
