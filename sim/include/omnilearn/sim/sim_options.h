// The options of one simulated run (run_simulation, simulation.h): what the simulator's parts share without
// depending on the simulation itself. Plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/run/run_writer.h"
#include "omnilearn/scenarios/scenario.h"
#include "omnilearn/sim/numerics.h"

namespace omnilearn::sim {

struct SimOptions {
  // The run folder to create and fill (manifest.json, iterations.csv, ...). Required.
  std::string output_dir;
  // The command line that started the run, recorded in manifest.json.
  std::vector<std::string> argv;
  // Extra string fields for manifest.json (e.g. "git_sha", "omnilearn_version"); written as JSON strings.
  std::map<std::string, std::string> manifest_fields;
  // Passed to SimGrid's engine as its command line: only `--cfg=name:value` and `--log=category.setting:value`
  // (anything else, a malformed one or a model name SimGrid does not know is an error naming it; SimGrid would
  // abort). Later settings override earlier ones, so append to these defaults rather than replace them.
  // The network defaults to CM02 (plain max-min sharing) without TCP cross-traffic, so that the flow-by-flow and
  // the analytic all-reduce agree. Actor stacks are 512 KiB. SimGrid guards each stack with a page, which costs
  // two memory mappings per actor: when the run's actors would pass vm.max_map_count (65,530 by default: about
  // 32,000 actors), run_simulation puts --cfg=contexts/guard-size:0 before these (and has malloc map large blocks
  // lazily, so unguarded stacks cost only the memory they touch); a guard size set here then is an error that
  // says which vm.max_map_count the run needs.
  std::vector<std::string> simgrid_args = {"--log=root.thres:critical", "--cfg=contexts/stack-size:512",
                                           "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"};
  // Called from the simulation thread with the fraction of the run done, in [0, 1], non-decreasing; at most
  // about 100 calls plus a final 1.0. Must not call back into the simulator.
  std::function<void(double)> progress;
  // BSP rings with more participants than this use the analytic form of the all-reduce model (same max-min
  // sharing, computed in O(distinct link speeds) instead of one SimGrid flow per worker; 8,192 flows per step
  // make SimGrid quadratic). 0: always analytic.
  std::size_t flow_allreduce_max_workers = 512;
  // ASP runs with more workers than this send their pushes and pulls across an analytic model of the parameter
  // server's link (CM02's max-min sharing of that link, computed in O(distinct worker links + log n) per event
  // instead of SimGrid's solver revisiting every flow on it), where that link is the only resource they share: a
  // star whose backbone cannot saturate, with SimGrid's default CM02 settings. Its times agree with the flows' to
  // rounding (last digits), so smaller runs keep the flows and their outputs. 0: analytic wherever it applies.
  std::size_t asp_flow_max_workers = 512;
  // The kernel's limit on memory mappings that decides whether stacks go unguarded (see simgrid_args); 0: read
  // /proc/sys/vm/max_map_count.
  std::size_t max_map_count = 0;
  // How BSP steps are driven. kPerWorker: one actor per worker that computes, meets the others at barriers and
  // sends its ring flow. kCoordinator: one actor starts every participant's computation as an activity on its host,
  // waits for them and computes the analytic all-reduce (or starts the ring flows itself): the same activities on
  // the same hosts at the same times, without N actors and 3 barriers per step. kAuto: kCoordinator when the
  // cluster has more workers than flow_allreduce_max_workers (its all-reduce is analytic), else kPerWorker.
  // Random draws (bursting quota phases, compute jitter) are taken in worker order by the coordinator, in the order
  // SimGrid wakes the actors by the per-worker actors: with those, the two give different (equally valid) samples.
  enum class BspActors { kAuto, kPerWorker, kCoordinator };
  BspActors bsp_actors = BspActors::kAuto;
  // BSP runs that compute every worker's times without SimGrid (coordinator mode, analytic computations and
  // all-reduce on a star: BspDriver::needs_worker_hosts) build no host, link or route per worker, only the parameter
  // server's: the same times from a fraction of the memory. false: a host per worker always (tests compare the two).
  bool compact_platform = true;
  // plans.csv's form (run::PlanRows): kAuto writes a row per worker per decision up to 64 workers, and above that
  // only the workers whose batch or weight changed, after a marker row per decision.
  run::PlanRows plan_rows = run::PlanRows::kAuto;
  // Per-worker per-iteration rows in iterations.csv. Turn off for very large runs (the summary stays exact).
  bool iteration_rows = true;
  // timeline.json is written when both this and the scenario's outputs.timeline are true.
  bool timeline = true;
  // What to do when output_dir already holds files (kReplace: --force). Another run's folder is always refused.
  run::FolderReuse reuse = run::FolderReuse::kRefuse;
  // Polled from the simulation thread once per BSP step or ASP update; true stops the run there. The run folder
  // then holds every row so far, whole, and a valid timeline.json, but no summary.json, and run_simulation returns
  // an error saying it was stopped. It must be cheap and async-signal-safe to feed (a flag a signal handler sets).
  // SimGrid installs its own SIGINT handler (which exits at once); run_simulation puts the caller's back.
  std::function<bool()> stop_requested;
  // Virtual-time training (workload.numerics: real): makes the real numerics the drivers call. Empty in a build
  // without LibTorch, where such a scenario is refused naming workload.numerics. Unused by time-only scenarios.
  NumericsFactory numerics;
};

}  // namespace omnilearn::sim
