// SimGrid's command-line settings for one run: checks the user's (SimGrid aborts the process on some bad ones) and
// adds what the run's size needs. Functions of their arguments and /proc/sys/vm/max_map_count; not thread-safe
// (effective_simgrid_args may tune malloc for the process).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/sim/sim_options.h"

namespace omnilearn::sim {

// OK when every setting is `--cfg=name:value` or `--log=category.setting:value` that SimGrid will not abort on
// (a malformed one, an unknown model name or log level); else an error naming the setting. SimGrid reports other
// bad values (an unknown key, a bad number) by throwing when the engine reads them.
Status check_simgrid_args(const std::vector<std::string>& args);

// The settings the engine gets: options.simgrid_args, after --cfg=contexts/guard-size:0 when `actors` guarded
// stacks (two memory mappings each) would pass vm.max_map_count (options.max_map_count, or the kernel's); then
// malloc maps large blocks on their own, so unguarded stacks cost only the pages they touch. An error when the
// user's settings ask for guard pages such a run cannot have (naming the sysctl to run), or for cpu/optim:TI while
// the speed profiles do not repeat (`profiles_repeat` false).
Result<std::vector<std::string>> effective_simgrid_args(const SimOptions& options, std::size_t actors,
                                                        bool profiles_repeat);

// What the running engine was set to (call inside it), for the analytic paths that repeat SimGrid's arithmetic:
// - the CPU model analytic_compute.h repeats: Cas01 with lazy updates, not the ptask_L07 host model, and the default
//   precisions (maxmin/precision 1e-5, surf/precision 1e-9: kRemainsPrecision there);
bool cpu_is_default_lazy_cas01();
// - the network FairShareLink (server_link_model.h) models: CM02 without cross-traffic, latency and bandwidth
//   factors 1, no weight-S, the max-min solver, not ptask_L07 (which has its own network; SimGrid sets "compound"
//   when the network model is chosen).
bool network_is_plain_cm02();

}  // namespace omnilearn::sim
