// Sweeps across MPI ranks (`omnilearn sweep --mpi` under mpirun): rank r runs the points i with i % size == r,
// each still as its own `omnilearn sim` process, then every rank's exit codes are gathered on rank 0. MPI is
// initialised and finalised inside one call, in the parent only: the point processes never call MPI.
#pragma once

#include <functional>
#include <string>
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
// finalises MPI. `prepare` runs on rank 0 only, before any rank starts a point (it claims the output folder); its
// error stops every rank. Points whose index is in `skip` are not run (their exit code is 0). Call at most once per
// process. An error when built without MPI or when MPI fails.
Result<MpiSweepOutcome> run_sweep_points_mpi(const std::vector<scenarios::SweepPoint>& points, PointRunOptions options,
                                             const std::function<Status()>& prepare, const std::vector<bool>& skip);

// The environment variable showing that an MPI launcher (mpirun, mpiexec, srun) started this process as one of
// several ranks: a world size above 1 (OMPI_COMM_WORLD_SIZE, PMI_SIZE, MPI_LOCALNRANKS) or a rank above 0
// (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), as "NAME=value"; "" when there is none. `getenv` looks a name up
// (std::getenv; a table in tests).
std::string mpi_launch_variable(const std::function<const char*(const char*)>& getenv);

}  // namespace omnilearn::cli
