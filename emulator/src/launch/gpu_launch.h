// What `omnilearn emulate --device cuda` adds to a launch (launcher.cpp): the CUDA probe of the worker program,
// each worker's MPS share, and the throttler that replays availability on a GPU (the freezer duty cycle, since an
// MPS percentage is fixed once a client connects). Internal to the emulator library.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/resource_throttler.h"

namespace omnilearn::emulator::detail {

// Runs `worker_exe --probe-cuda` (no shell); ok when its LibTorch can train on CUDA here, else its reason.
Status probe_cuda(const std::string& worker_exe);

// MPS active-thread percentages: the scenario's shares normalised so that together they make the whole GPU
// (100), each at least 1. HL8's 6/6/4/32 cores give 13/13/8/67.
std::vector<int> mps_percentages(const std::vector<double>& shares);

// The period of the GPU duty cycle (DutyCycleThrottler).
inline constexpr double kGpuDutyPeriodS = 0.100;

// GPU workers' groups: equal CPU quotas (host_cpus / workers each; the GPU share is the heterogeneity) inside a
// freezer duty cycle of kGpuDutyPeriodS that replays availability.
Result<WorkerGroups> make_gpu_throttler(const std::string& run_id, std::size_t workers, int host_cpus,
                                        const scenarios::EmulatorSpec& config);

}  // namespace omnilearn::emulator::detail
