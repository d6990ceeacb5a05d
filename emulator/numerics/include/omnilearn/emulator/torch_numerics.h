// The LibTorch side of virtual-time training (workload.numerics: real): sim::TrainingNumerics computed with the
// testbed's own networks, data, global sampler and compute step (emulator/worker/torch_parts.h), so that a simulated
// worker's iteration computes what a testbed worker's would. This header is Torch-free; the library behind it links
// Torch. One instance per simulation; not thread-safe (the simulation thread). LibTorch's intra-op threads are set
// process-wide (at::set_num_threads).
#pragma once

#include <memory>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/numerics.h"

namespace omnilearn::emulator {

struct TorchNumericsOptions {
  // LibTorch intra-op threads (at::set_num_threads). 0: the CPUs this process may run on. Same scenario, seed and
  // thread count: the same numbers.
  int threads = 0;
};

// The numerics of `scenario`: its emulator settings name the network (or TorchScript model), the data (Fashion-MNIST
// from emulator.data_source, decompressed into emulator.cache_dir, or the user's tensor files), the optimiser
// (learning_rate, momentum, warmup_updates; ASP: lr_scaling and its rule) and ASP's algorithm (workload.asp:
// docs/asp-rules.md). Errors name the setting at fault. Memory: BSP holds one model. ASP holds the server's
// parameters plus one parameter version per worker, shared by reference counting among the workers that pulled the
// same version: at most (workers + 1) x parameters floats; a worker with its own copy (update: model-overwrite,
// pull: per-epoch) adds its momentum buffer, and DC-ASGD keeps what each worker pulled.
Result<std::unique_ptr<sim::TrainingNumerics>> make_torch_numerics(const scenarios::Scenario& scenario,
                                                                   const TorchNumericsOptions& options);

// A factory for sim::SimOptions::numerics.
sim::NumericsFactory torch_numerics_factory(TorchNumericsOptions options);

}  // namespace omnilearn::emulator
