// The simulator's options for a resolved jobs run (run/jobs_run_setup.h): the scheduler and its round settings,
// the network, the packed pairs, metric curves and energy figures of `omnilearn jobs run`. Pure function:
// thread-safe.
#pragma once

#include "omnilearn/run/jobs_run_setup.h"
#include "omnilearn/sim/cluster_simulation.h"

namespace omnilearn::sim {

// The options `setup` stands for; output_dir is setup.out_dir. The pointers in them (packed_speeds,
// metric_curves) point into `setup`, which must outlive them. The caller adds argv, stop_requested and on_round.
ClusterSimOptions cluster_sim_options(const run::JobsRunSetup& setup);

}  // namespace omnilearn::sim
