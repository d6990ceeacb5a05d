#include "omnilearn/sim/cluster_sim_setup.h"

namespace omnilearn::sim {

ClusterSimOptions cluster_sim_options(const run::JobsRunSetup& setup) {
  const scenarios::JobsScenario& s = setup.scenario;
  ClusterSimOptions o;
  o.scheduler = s.scheduler;
  o.scheduling.round_s = s.round_s;
  o.scheduling.checkpoint_s = s.checkpoint_s;
  o.scheduling.restore_s = s.restore_s;
  o.scheduling.restore_at_first_start = s.restore_at_first_start;
  o.scheduling.placement = s.placement == "spread" ? scheduler::Placement::kSpread : scheduler::Placement::kPack;
  if (!s.las_thresholds.empty()) o.scheduling.las_thresholds = s.las_thresholds;
  o.scheduling.packing = s.packing;
  o.node_bandwidth_Bps = s.node_bandwidth_Bps;
  o.max_time_s = s.max_time_s;
  o.model_parameters = s.parameters;
  if (setup.packed_speeds) o.packed_speeds = &*setup.packed_speeds;
  if (setup.metric_curves) o.metric_curves = &*setup.metric_curves;
  if (setup.pollux) {
    o.pollux = &*setup.pollux;
    o.measured_steps = s.step_model == "measured";
    o.statistical_efficiency = s.statistical_efficiency;
    o.job_model_source =
        "traces/devices/pollux-steps.csv, pollux-efficiency.csv (Pollux, Apache-2.0, Qiao et al., "
        "OSDI 2021; petuum/adaptdl @ de25dcc)";
  }
  if (s.las_starvation_s) o.scheduling.las_starvation_s = *s.las_starvation_s;
  if (s.energy) {
    ClusterEnergyOptions e;
    e.wait = s.energy->wait;
    e.comm = s.energy->comm;
    e.power = setup.power;
    o.energy = std::move(e);
  }
  o.output_dir = setup.out_dir;
  return o;
}

}  // namespace omnilearn::sim
