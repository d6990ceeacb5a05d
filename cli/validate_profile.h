// What `omnilearn validate` hands the simulator: facts read off a testbed run folder, and the simulator's model
// profile (the calibrated profile plus the testbed's terms). validate_command.cpp runs the stages.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::cli {

namespace fs = std::filesystem;

// What the simulator needs to know of the testbed run.
struct TestbedFacts {
  double host_core_flops = 0.0;  // the scenario speed of one host core (speed_flops / cpu share, equal for all)
  std::vector<double> cpu_shares;  // host cores per worker
  double quota_period_s = 0.010;
  bool quota_holds_comm = true;  // runs from before emulator.throttle were all `process`
  long long iterations = 0;
  // The mean exchange: per step, the all-reduce time of the last worker to arrive (the smallest comm_s + wait_s),
  // start-up and evaluation steps left out. The fixed per-step cost of the testbed's all-reduce on this host.
  double exchange_s = 0.0;
  // The mean over workers of the coefficient of variation of their compute_s (same steps): the host's jitter.
  double compute_cv = 0.0;
  // The mean over pairs of workers of the correlation of their compute_s over the same steps, clamped to [0, 1]:
  // the part of the jitter the workers share (the host's).
  double compute_shared = 0.0;
  // Per worker (index = worker id), the standard deviation of compute_s over the same steps, in seconds.
  std::vector<double> compute_std_s;
};

// The testbed terms the simulator profile gets besides the run folder's facts.
struct SimProfileTerms {
  double allreduce_fixed_s = 0.0;
  double compute_jitter_cv = 0.0;  // 0: none
  double compute_jitter_shared = 0.0;
  // compute_noise: the standard deviation of a step's compute (s) against CPU share; empty: none. Both ascending.
  std::vector<double> noise_shares;
  std::vector<double> noise_std_s;
  double share_batch = 32.0;  // the batch of the calibration's quota sweep
  bool continuous_slowdown = false;
  double available_cores = 0.0;  // host cores left by other load; 0: not measured
};

// A file's whole text ("" when it cannot be read).
std::string read_text(const fs::path& path);

// Reads manifest.json, summary.json, iterations.csv and evaluations.csv of a testbed run; errors name the file.
Result<TestbedFacts> read_testbed(const fs::path& run);

// The compute-noise table of a run: per distinct CPU share (ascending), the mean over its workers of their compute
// standard deviation. Fills terms.noise_shares and terms.noise_std_s.
void set_compute_noise(const TestbedFacts& run, SimProfileTerms& terms);

// The calibrated profile plus the testbed terms: host_core_flops, the share -> slowdown table from fidelity.csv,
// the quota period, the all-reduce's fixed cost, the compute jitter (0: none) and the host cores left by other load
// (`terms`). Two readings of fidelity.csv:
// - default: slowdown(s) = 1 / achieved_share(s) below a full core. A BSP worker idles in every all-reduce, so it
//   computes at the full-core law for the CPU its quota grants; measured on the testbed, throttled workers took
//   1.03-1.09x the linear time (law / share), while the calibration's back-to-back loop took 1.3-1.6x.
// - continuous: slowdown(s) = the loop's step time at share s (batch terms.share_batch) over the profile's law at that
//   batch (not over the share-1.0 row, so that the law and the table agree even if the host was busier during one
//   sweep than the other): the super-linear slowdown of a process that is never idle.
Status write_sim_profile(const fs::path& calibration, const TestbedFacts& tb, const SimProfileTerms& terms,
                         const fs::path& out);

}  // namespace omnilearn::cli
