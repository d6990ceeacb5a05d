// `omnilearn sim` on a `kind: hybrid` scenario: runs the hybrid job under each policy the scenario names and writes
// one run folder per policy, with a comparison table when there are several.
#pragma once

#include <string>
#include <vector>

namespace omnilearn::cli {

// `out`: the run folder ("" : runs/<scenario name>); `force`: replace an earlier run's files there.
int run_hybrid_sim(const std::string& path, const std::vector<std::string>& overrides, const std::string& out,
                   bool force, bool quiet);

}  // namespace omnilearn::cli
