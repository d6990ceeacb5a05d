// omnilearn-sim-train: `omnilearn sim` for scenarios with workload.numerics: real, linked with LibTorch. The omnilearn
// binary execs it for those scenarios, so that time-only runs (and every sweep point) never load LibTorch, whose
// start-up costs about 0.4 s and 160 MB per process. Called as `omnilearn-sim-train sim SCENARIO [options]`.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "sim") {
    std::fputs("usage: omnilearn-sim-train sim SCENARIO [options] (what omnilearn sim runs for workload.numerics: "
               "real)\n", stderr);
    return 2;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  const std::vector<std::string> full(argv, argv + argc);
  return omnilearn::cli::run_sim_command(args, full);
}
