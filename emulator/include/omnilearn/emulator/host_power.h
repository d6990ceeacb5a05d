// HostPower: this host's CPU package power, idle and with every core busy, measured through an energy counter (RAPL,
// energy_counter.h) on a separate short stress run, so that the simulator's prediction for the same host can be
// written in the host's own units and compared with the joules a testbed run measured (docs/energy.md, "On the
// testbed"). Stored as host-power.json in the calibration folder. Stateless functions: thread-safe; a measurement
// blocks its caller for its two windows.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"
#include "omnilearn/emulator/energy_counter.h"

namespace omnilearn::emulator {

inline constexpr const char* kHostPowerFile = "host-power.json";

struct HostPower {
  std::string host_id;                 // this_host_id() where it was measured
  std::string counter;                 // the counter's description ("RAPL package-0")
  int cores = 0;                       // the cores kept busy in the busy window: the host's online CPUs
  double idle_w = 0.0;                 // package watts with the host idle
  double busy_w = 0.0;                 // package watts with `cores` cores busy
  Seconds idle_s = 0.0, busy_s = 0.0;  // the windows' lengths as measured
};

// This host's identity: /etc/machine-id (systemd's, stable across reboots), else "hostname:<name>"; an error when
// neither can be read.
Result<std::string> this_host_id();

// How the measurement runs. The defaults sleep through the idle window and spin one thread per core through the busy
// one, on the steady clock; tests replace them (the windows then take no time).
struct HostPowerRun {
  Seconds idle_s = 10.0;
  Seconds busy_s = 10.0;
  int cores = 0;                           // 0: the host's online CPUs
  std::function<void(Seconds)> idle;       // wait this long with the host idle
  std::function<void(Seconds, int)> busy;  // keep this many cores busy this long
  std::function<Seconds()> clock;          // seconds, monotonic
};

// The idle window, then the busy window, each read through `counter` at its ends: watts = joules / seconds. An error
// when a reading fails, a window measured no time, or the busy watts are not above the idle ones (another load in
// the idle window, or a counter that does not follow the CPU).
Result<HostPower> measure_host_power(EnergyCounter& counter, const std::string& host_id, const HostPowerRun& run = {});

// The prediction in host units: idle_w over the window plus, for each busy core-second, the busy core's watts above
// idle ((busy_w - idle_w) / cores).
double predicted_host_joules(const HostPower& power, Seconds window_s, double busy_core_s);

// host-power.json: written atomically; read back with errors naming the file and the field.
Status write_host_power(const HostPower& power, const std::filesystem::path& file);
Result<HostPower> read_host_power(const std::filesystem::path& file);

}  // namespace omnilearn::emulator
