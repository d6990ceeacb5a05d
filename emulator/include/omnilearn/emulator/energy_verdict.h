// EnergyVerdict: `omnilearn validate`'s judgement of the simulator's energy against a testbed run's measured joules,
// like with like (docs/energy.md, "On the testbed"): the simulator's run predicted in this host's units from the
// host's calibrated idle and busy package watts (host_power.h), against the host's counter over the testbed's
// training window. Given only when the testbed measured, the host power was calibrated on this host with the same
// counter, and the run is not scaled; otherwise it says why it refuses. Stateless functions: thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/emulator/host_power.h"

namespace omnilearn::emulator {

inline constexpr double kEnergyTolerancePct = 15.0;  // issue 27's criterion
inline constexpr const char* kEnergyVerdictFile = "energy-verdict.json";

struct EnergyVerdict {
  std::string refusal;  // non-empty: no verdict, and why
  // A verdict's figures: the testbed's measured joules, the simulator's in host units, their signed error
  // (100 (predicted - measured) / measured) and whether it lies within the tolerance.
  double measured_j = 0.0, predicted_j = 0.0, error_pct = 0.0;
  bool within = false;
  Seconds sim_time_s = 0.0;  // the simulator's run
  double busy_core_s = 0.0;  // the simulator's busy host core-seconds: its workers' compute and exchange times x share
  std::optional<HostPower> host;
  bool judged() const { return refusal.empty(); }
};

// The verdict on `testbed` (an `omnilearn emulate` run folder) and `sim` (the simulator's run of it) with the host
// power in `calibration` (the folder, or its profile.yaml: host-power.json lies beside it), on host `host_id`
// (this_host_id()). A refusal, in this order: the testbed's joules are not measured; no host-power.json; calibrated
// on another host; measured through another counter than the calibration's; the run is scaled (a worker's CPU
// share differs from its node's cores: the simulator's figures then describe other machines than this host). An
// error, naming the file, when a file it needs is missing or malformed.
Result<EnergyVerdict> judge_host_energy(const std::filesystem::path& calibration, const std::filesystem::path& testbed,
                                        const std::filesystem::path& sim, const std::string& host_id);

// One line for the terminal: "energy verdict: ..." or "energy: no verdict: <refusal>".
std::string format_energy_verdict(const EnergyVerdict& verdict);

// energy-verdict.json (judged, refusal, the figures, the host power), written atomically.
Status write_energy_verdict(const EnergyVerdict& verdict, const std::filesystem::path& file);

}  // namespace omnilearn::emulator
