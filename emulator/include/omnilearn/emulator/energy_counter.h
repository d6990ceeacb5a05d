// EnergyCounter: the seam through which a testbed run reads the host's energy counters (docs/energy.md, "On the
// testbed"). The one implementation reads RAPL's package domains through the powercap sysfs tree; the GPU's counters
// (NVML) would be a second one, not built: Debian ships no NVML header or library outside NVIDIA's driver packages,
// and the testbed adds no dependency for it. Not thread-safe: one launcher thread reads a counter.
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

}  // namespace omnilearn::emulator
