#include "cli/mpi_sweep.h"

#include <cstdlib>

#ifdef OMNILEARN_HAVE_MPI
#include <dlfcn.h>
#include <mpi.h>

#include <chrono>
#include <climits>
#include <thread>
#endif

namespace omnilearn::cli {

#ifdef OMNILEARN_HAVE_MPI

namespace {

Status mpi_error(int rc, const char* call) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return Status::internal(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

// libsimgrid exports MPI_* too (SMPI): when it comes first in the dynamic symbol lookup, MPI_Init is SimGrid's,
// which aborts outside smpirun. cli/CMakeLists.txt links MPI first; this says so plainly if that ever changes.
Status check_mpi_is_not_smpi() {
  Dl_info info{};
  void* const init = dlsym(RTLD_DEFAULT, "MPI_Init");  // what a call to MPI_Init binds to
  if (init == nullptr || dladdr(init, &info) == 0 || info.dli_fname == nullptr) return Status::ok();
  const std::string library = info.dli_fname;
  if (library.find("simgrid") == std::string::npos) return Status::ok();
  return Status::internal("MPI_Init resolves to " + library +
                          " (SimGrid's SMPI), not the system MPI: link MPI "
                          "before omnilearn::sim (cli/CMakeLists.txt)");
}

}  // namespace

bool mpi_available() { return true; }

Result<MpiSweepOutcome> run_sweep_points_mpi(const std::vector<scenarios::SweepPoint>& points, PointRunOptions options,
                                             const std::function<Status()>& prepare, const std::vector<bool>& skip) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Status::internal("MPI is already initialised in this process");
  OMNI_RETURN_IF_ERROR(check_mpi_is_not_smpi());
  if (int rc = MPI_Init(nullptr, nullptr); rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Init");
  // Errors come back as codes instead of aborting the job, so that each rank reports them.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MpiSweepOutcome outcome;
  MPI_Comm_rank(MPI_COMM_WORLD, &outcome.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &outcome.size);
  outcome.root = outcome.rank == 0;
  // Rank 0 prepares the output folder while the others wait; everyone learns whether it worked.
  Status prepared = outcome.root ? prepare() : Status::ok();
  int ok = prepared.is_ok() ? 1 : 0;
  if (int rc = MPI_Bcast(&ok, 1, MPI_INT, /*root=*/0, MPI_COMM_WORLD); rc != MPI_SUCCESS) {
    Status error = mpi_error(rc, "waiting for rank 0 to prepare the output folder");
    MPI_Abort(MPI_COMM_WORLD, 1);
    return error;
  }
  if (ok == 0) {
    MPI_Finalize();
    return outcome.root ? prepared : Status::io_error("rank 0 could not prepare the output folder (see its message)");
  }

  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i % static_cast<std::size_t>(outcome.size) == static_cast<std::size_t>(outcome.rank) &&
        !(i < skip.size() && skip[i])) {
      mine.push_back(i);
    }
  }
  options.progress = options.progress && outcome.root;
  options.strip_mpi_environment = true;
  options.label += " (rank " + std::to_string(outcome.rank) + "/" + std::to_string(outcome.size) + ")";
  std::vector<int> codes = run_sweep_points(points, mine, options);
  for (std::size_t i = 0; i < points.size() && outcome.root; ++i) {
    if (i < skip.size() && skip[i]) codes[i] = 0;  // finished before (--resume)
  }

  // Points of other ranks hold kPointNotRun (-1), below every real exit code, so MAX merges the ranks' vectors.
  std::vector<int> merged(points.size(), kPointNotRun);
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Ireduce(codes.data(), merged.data(), static_cast<int>(points.size()), MPI_INT, MPI_MAX,
                       /*root=*/0, MPI_COMM_WORLD, &request);
  // Poll with sleeps: a blocking reduce spins a core on rank 0 while the other ranks still simulate.
  for (int done = 0; rc == MPI_SUCCESS && !done;) {
    rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (rc != MPI_SUCCESS) {
    Status error = mpi_error(rc, "gathering exit codes on rank 0");
    MPI_Abort(MPI_COMM_WORLD, 1);
    return error;
  }
  MPI_Finalize();
  outcome.exit_codes = outcome.root ? std::move(merged) : std::move(codes);
  return outcome;
}

#else

bool mpi_available() { return false; }

Result<MpiSweepOutcome> run_sweep_points_mpi(const std::vector<scenarios::SweepPoint>& /*points*/,
                                             PointRunOptions /*options*/, const std::function<Status()>& /*prepare*/,
                                             const std::vector<bool>& /*skip*/) {
  return Status::invalid_argument(
      "--mpi: this omnilearn was built without MPI (install libopenmpi-dev openmpi-bin, e.g. with "
      "scripts/setup.sh, then rebuild)");
}

#endif

std::string mpi_launch_variable(const std::function<const char*(const char*)>& getenv) {
  auto number = [&](const char* name) -> long {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') return -1;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' ? n : -1;
  };
  for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    if (number(size) > 1) return std::string(size) + "=" + getenv(size);
  }
  for (const char* rank : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (number(rank) > 0) return std::string(rank) + "=" + getenv(rank);
  }
  return "";
}

}  // namespace omnilearn::cli
