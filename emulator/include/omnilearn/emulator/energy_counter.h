// EnergyCounter: the seam through which a testbed run reads the host's energy counters (docs/energy.md, "On the
// testbed"). Two implementations: RAPL's CPU package domains through the powercap sysfs tree, and each GPU's NVML
// energy counter through dlopen of NVIDIA's library (no header and no link-time dependency: the few functions used are
// declared in nvml_counter.cpp). Not thread-safe: one launcher thread reads a counter.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "omnilearn/base/status.h"

namespace omnilearn::emulator {

class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  // What it counts, for the run's summary ("RAPL package-0, package-1").
  virtual std::string description() const = 0;
  // Joules counted since the counter was opened. Each hardware counter wraps at its range: call this at least once
  // per wrap period (RAPL: max_energy_range_uj, minutes at full power), so that at most one wrap lies between reads.
  virtual Result<double> joules() = 0;
};

// The change of a counter from `before` to `after`, where the counter wraps to 0 past `max_range` (at most one wrap
// between the two readings).
std::uint64_t wrapped_delta(std::uint64_t before, std::uint64_t after, std::uint64_t max_range);

// RAPL's package domains under `powercap`: the zones intel-rapl:N (AMD's too) whose `name` starts with "package",
// not their sub-zones intel-rapl:N:M (core, uncore and dram parts of a package) nor psys (which overlaps them). An
// error saying why when the tree is absent, holds no package zone, or a zone's energy_uj or max_energy_range_uj
// cannot be read as a number (since Linux 5.10 only root may read energy_uj); the error names the file.
Result<std::unique_ptr<EnergyCounter>> open_rapl(const std::filesystem::path& powercap = "/sys/class/powercap");

// This host's counters: RAPL's packages, or an error saying why there are none.
Result<std::unique_ptr<EnergyCounter>> open_host_energy_counter();

// The NVML library a GPU run opens: the driver's, found by the dynamic loader.
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// Every GPU that NVML sees (all of the host's, whatever CUDA_VISIBLE_DEVICES says), through `library` loaded with
// dlopen: joules() sums nvmlDeviceGetTotalEnergyConsumption (millijoules since the driver loaded) over the devices,
// from the moment of opening. An error naming the library when it cannot be loaded, naming the function when one is
// missing, with NVML's own error string (nvmlErrorString) when a call fails (nvmlInit_v2, a device without the
// counter: before Volta), and when NVML sees no GPU. A reading that goes backwards is an error naming the GPU (the
// counter counts from driver load and never wraps). The counter holds NVML initialised until it is destroyed.
Result<std::unique_ptr<EnergyCounter>> open_nvml(const std::string& library = kNvmlLibrary);

}  // namespace omnilearn::emulator
