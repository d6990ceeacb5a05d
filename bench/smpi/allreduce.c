/* One MPI_Allreduce of BYTES bytes (MPI_FLOAT sum) after a barrier; rank 0 prints the simulated seconds it took
   (the slowest rank's). Buffers are SMPI shared memory: 256 ranks x 45 MB would not fit otherwise. SMPI only. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long bytes = argc > 1 ? atol(argv[1]) : 1000000;
  const int count = (int)(bytes / 4);
  float* in = (float*)SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
  float* out = (float*)SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double mine = MPI_Wtime() - t0, slowest = 0.0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%.9f\n", slowest);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
