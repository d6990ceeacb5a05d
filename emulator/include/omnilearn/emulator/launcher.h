// The testbed launcher: turns a Scenario into worker processes on this host, each inside its own resource group
// before it trains, replays availability through a ResourceThrottler on the launcher's thread, merges what the
// workers report into a run folder (run::RunWriter, the simulator's schema), and cleans up (processes and
// groups) however the run ends. One run at a time per process: it installs SIGINT/SIGTERM handlers while it runs.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/launch_environment.h"
#include "omnilearn/run/run_writer.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::emulator {

// Several hosts, as torchrun: this launcher is node `node_rank` of `nnodes` and runs the contiguous workers
// node_worker_range() gives it. Rank 0 (on node 0) serves the c10d TCPStore on master_addr:master_port; every
// worker binds Gloo to bind_addr. nnodes 1 (the default) is the single-host run: Gloo on 127.0.0.1 and the
// rendezvous through a file in the run folder (no listening socket).
struct NodeOptions {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;  // required when nnodes > 1 (an address of node 0 that every node reaches)
  int master_port = 0;      // required when nnodes > 1; must be free on node 0
  std::string bind_addr;    // required when nnodes > 1: this node's address on the network joining the nodes
  // Required when nnodes > 1: the run's shared secret. Every rank proves it knows it before joining
  // (join_secret.h); it reaches the workers in their environment, and is written nowhere.
  std::string secret;
};

// The workers [begin, end) that node `node_rank` of `nnodes` runs: [r*W/N, (r+1)*W/N).
struct WorkerRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};
WorkerRange node_worker_range(std::size_t workers, int nnodes, int node_rank);

// The run folder part that node `node_rank` writes: `output_dir` for node 0 (the full run folder: plans,
// evaluations, summary, and iteration rows of every worker), `output_dir`/node<r> for the others (manifest,
// iterations.csv, availability.csv and timeline.json of that node's workers on its own clock; no summary.json).
std::string node_output_dir(const std::string& output_dir, int node_rank);

struct LaunchOptions {
  std::string output_dir;                 // the run folder
  // When the run folder is not empty: refuse, or replace an earlier run's files (--force). A folder another run
  // holds is always refused (run::RunFolder), before any cgroup or process is made.
  run::FolderReuse reuse = run::FolderReuse::kRefuse;
  std::vector<std::string> argv;          // recorded in manifest.json
  std::vector<std::string> overrides;     // the scenario's --set strings (recorded in manifest.json)
  std::map<std::string, std::string> manifest_fields;
  std::function<void(const std::string&)> log;  // progress lines; default stderr
  NodeOptions nodes;                      // several hosts; the default is this host alone
  // What the launch asks of the host: the worker program, the dataset, the resource groups. Null: a
  // HostLaunchEnvironment with the installed worker program. Tests pass a fake.
  std::shared_ptr<LaunchEnvironment> environment;
};

// kStalled: a worker reported no iteration for emulator.stall_timeout_s (liveness); exit code 1.
enum class RunOutcome { kCompleted, kWorkerFailed, kInterrupted, kTerminated, kStalled };

struct LaunchResult {
  RunOutcome outcome = RunOutcome::kCompleted;
  int exit_code = 0;                // 0, 1 (a worker failed or stalled), 130 (SIGINT), 143 (SIGTERM)
  std::string message;              // what went wrong, naming the worker
  std::string run_dir;              // this node's part (node_output_dir)
  run::RunSummary summary;    // complete only when outcome is kCompleted
};

// Runs `scenario` (with several nodes: this node's share of it) on this host. An error Result means nothing was
// started (bad scenario for the testbed, dataset missing, no cgroup permission, bad node options, ...); once workers
// run, every outcome comes back as a LaunchResult.
// The testbed settings are the scenario's (scenario.emulator); the launcher writes them, resolved, into the run
// folder's config.json, which every worker reads.
Result<LaunchResult> run_emulation(const scenarios::Scenario& scenario, const LaunchOptions& options);

}  // namespace omnilearn::emulator
