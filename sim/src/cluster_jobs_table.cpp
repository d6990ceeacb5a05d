#include "cluster_jobs_table.h"

#include <algorithm>

namespace omnilearn::sim {

run::JobsTable simulated_jobs_table(const ClusterSummary& summary, const std::vector<SimulatedJobFacts>& facts,
                                    const std::vector<std::string>& kinds) {
  run::JobsTable t;
  t.kinds = kinds;
  t.asp_rules = std::any_of(facts.begin(), facts.end(),
                            [](const SimulatedJobFacts& f) { return !f.spec->asp_rule.empty(); });
  t.energy = summary.energy.has_value();
  for (std::size_t j = 0; j < summary.jobs.size() && j < facts.size(); ++j) {
    const JobOutcome& o = summary.jobs[j];
    run::JobRow r = run::job_row(o);
    r.batch_policy = facts[j].spec->batch_policy;
    r.workers = facts[j].spec->workers;
    if (o.finished()) {
      r.contention = o.contention;
      r.fair_s = o.fair_s;
      r.rho = o.rho();
    }
    r.asp_rule = facts[j].spec->asp_rule;
    r.dropped_pushes = facts[j].dropped_pushes;
    if (summary.energy) {
      const JobEnergy& e = summary.energy->jobs[j];
      r.energy = run::JobJoules{e.joules(), e.compute_j, e.comm_j, e.wait_j, e.idle_j};
    }
    t.rows.push_back(std::move(r));
  }
  return t;
}

}  // namespace omnilearn::sim
