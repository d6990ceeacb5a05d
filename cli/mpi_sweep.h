// Sweeps across MPI ranks (`omnilearn sweep --mpi` under mpirun): rank r runs the points i with i % size == r,
// each still as its own `omnilearn sim` process, then every rank's exit codes are gathered on rank 0. MPI is
// initialised and finalised inside one call, in the parent only: the point processes never call MPI.
#pragma once

#include <vector>

#include "cli/sweep_runner.h"
#include "omnilearn/base/status.h"

namespace omnilearn::cli {

struct MpiSweepOutcome {
  bool root = false;  // rank 0: the one that writes sweep.csv and prints the table
  int rank = 0;
  int size = 1;
  std::vector<int> exit_codes;  // on rank 0: every point's; elsewhere: this rank's points only
};

// Whether this binary was built with MPI.
bool mpi_available();

// Runs this rank's share of `points` with `options` (its `jobs` per rank), gathers the exit codes on rank 0 and
// finalises MPI. Call at most once per process. An error when built without MPI or when MPI fails.
Result<MpiSweepOutcome> run_sweep_points_mpi(const std::vector<scenarios::SweepPoint>& points, PointRunOptions options);

}  // namespace omnilearn::cli
