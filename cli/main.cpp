// omnilearn: the one front binary. Parses the subcommand and hands the rest of the command line to it.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr const char* kUsage = R"(omnilearn: batch-size control for heterogeneous distributed training

usage: omnilearn <command> [options]     (omnilearn <command> --help for a command's options)

commands:
  demo       closed-loop controller demo against synthetic workers (no simulator needed)
  sim        simulate one scenario in SimGrid and write its run folder
  sweep      run the cartesian product of a sweep file, each point in its own process
  emulate    train for real: LibTorch worker processes throttled by cgroups, driven by the same controller (a
             `kind: hybrid-testbed` spec: a pipeline of stage processes against the pipeline simulation)
  calibrate  measure compute time vs batch and CPU share here; write a model profile for the simulator
  validate   calibrate, run the testbed and the simulator on one scenario, report the simulator's error (a
             pipeline testbed run folder: check it against its prediction's bars)
  trace      import, synthesise and summarise availability traces
  jobs       run jobs scenarios and job files (several jobs sharing a cluster); import, generate, check
  chakra     replay a Chakra execution trace (one file per rank, as ASTRA-sim takes) on a simple network
  report     figures and an HTML report for run and sweep folders (Python: pandas, matplotlib)

examples:
  omnilearn sim scenarios/paper/bsp-hl8.yaml --set policy.name=omnilearn
  omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --jobs 2
  omnilearn emulate scenarios/testbed/bsp-hl8.yaml --set policy.name=uniform
  omnilearn trace stats traces/data/azure-v1-16vms.csv
  omnilearn report runs/paper-bsp-levels --out runs/report
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "--version") {
    std::printf("omnilearn %s\n", omnilearn::cli::version_string().c_str());
    return 0;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  const std::vector<std::string> full(argv, argv + argc);
  if (command == "demo") return omnilearn::cli::run_demo_command(args);
#ifdef OMNILEARN_HAVE_SIM
  if (command == "sim") return omnilearn::cli::run_sim_command(args, full);
  if (command == "sweep") return omnilearn::cli::run_sweep_command(args);
#endif
#ifdef OMNILEARN_HAVE_EMULATOR
  if (command == "emulate") return omnilearn::cli::run_emulate_command(args, full);
  if (command == "calibrate") return omnilearn::cli::run_calibrate_command(args, full);
#ifdef OMNILEARN_HAVE_SIM
  if (command == "validate") return omnilearn::cli::run_validate_command(args, full);
#endif
#endif
  if (command == "trace") return run_trace_command(args);
  if (command == "jobs") return run_jobs_command(args);
  if (command == "chakra") return omnilearn::cli::run_chakra_command(args);
  if (command == "report") return omnilearn::cli::run_report_command(args);
  std::fprintf(stderr,
               "omnilearn: unknown command '%s' (expected demo, sim, sweep, emulate, calibrate, validate, trace, jobs, "
               "chakra or report)\n\n%s",
               command.c_str(), kUsage);
  return 2;
}
