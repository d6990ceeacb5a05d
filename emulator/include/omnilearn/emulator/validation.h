// The testbed's side of `omnilearn validate` (the simulator against the testbed): the facts read off a testbed run
// folder (CPU shares, quota, step timings, compute noise), the host load measured while a run trains, and the
// simulator's model profile: the calibrated profile plus the testbed's terms. Stateless functions (thread-safe) and
// a HostLoadMeter owned by one caller.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

// What the simulator needs to know of a testbed run.
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

// Reads manifest.json, summary.json, iterations.csv and (when there is one) evaluations.csv of a testbed run. The
// step timings leave out the first 10 steps (start-up, as analysis/omnilearn_analysis/validate.py), each evaluated
// step and the one after it, and the rows of down workers (batch 0); a row cut short (the last of a killed run) is
// skipped. Errors name the run folder or the file and line.
Result<TestbedFacts> read_testbed(const std::filesystem::path& run);

// The compute-noise table of a run: per distinct CPU share (ascending), the mean over its workers of their compute
// standard deviation (workers that never varied left out). Fills terms.noise_shares and terms.noise_std_s.
void set_compute_noise(const TestbedFacts& run, SimProfileTerms& terms);

// `calibration` as `omnilearn calibrate` wrote it: a folder (its profile.yaml) or a profile file.
std::filesystem::path calibrated_profile_path(const std::filesystem::path& calibration);

// The calibrated profile (which must hold the measured law) with its testbed terms replaced by the run's and
// `terms`: host_core_flops, the share -> slowdown table from fidelity.csv next to the profile (empty when there is
// none: the simulator then assumes a linear quota), the quota period and whether it holds the all-reduce, the
// all-reduce's fixed cost, the compute jitter and noise (none when 0 or empty), and the host cores left by other
// load (absent when 0). Two readings of fidelity.csv:
// - default: slowdown(s) = 1 / achieved_share(s) below a full core. A BSP worker idles in every all-reduce, so it
//   computes at the full-core law for the CPU its quota grants; measured on the testbed, throttled workers took
//   1.03-1.09x the linear time (law / share), while the calibration's back-to-back loop took 1.3-1.6x.
// - continuous: slowdown(s) = the loop's step time at share s (batch terms.share_batch) over the profile's law at that
//   batch (not over the share-1.0 row, so that the law and the table agree even if the host was busier during one
//   sweep than the other): the super-linear slowdown of a process that is never idle.
// Values keep the digits the measurements carry (slowdowns and noise 4 significant digits, shares 6). Errors name
// the profile or fidelity.csv.
Result<scenarios::ModelProfile> sim_profile(const std::filesystem::path& calibration, const TestbedFacts& tb,
                                            const SimProfileTerms& terms);

// sim_profile, written atomically to `out` as a model-profile file whose comment names the calibration; returns
// what it wrote.
Result<scenarios::ModelProfile> write_sim_profile(const std::filesystem::path& calibration, const TestbedFacts& tb,
                                                  const SimProfileTerms& terms, const std::filesystem::path& out);

// The CPU that processes other than a testbed run use on this host while the run's workers train: the host's busy
// CPU (/proc/stat: all but idle and iowait) less the run's cgroup's usage (v1 cpuacct or v2 cpu.stat; the folder is
// the manifest's cgroup_folder), between the first sample with the workers running and the last.
class HostLoadMeter {
 public:
  struct Load {
    double others_cores = 0.0;     // mean cores used by other processes
    double available_cores = 0.0;  // the host's online cores less that (at least 0.05)
  };

  explicit HostLoadMeter(std::filesystem::path run) : run_(std::move(run)) {}

  // Takes one sample (call it every fraction of a second while the run lasts); nothing until the run's manifest
  // names its cgroup and the cgroup has used CPU.
  void sample();
  // The load over the samples, or nothing when they span a second or less of training.
  std::optional<Load> load() const;

 private:
  struct Reading {
    double t_s = 0.0;
    double host_busy_s = 0.0;
    double run_s = 0.0;
  };
  std::filesystem::path run_;
  std::string cgroup_folder_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::optional<Reading> first_;
  std::optional<Reading> last_;
};

}  // namespace omnilearn::emulator
