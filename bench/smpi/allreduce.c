/* One all-reduce of BYTES bytes (MPI_FLOAT sum) after a barrier; rank 0 prints the simulated seconds it took (the
   slowest rank's). Buffers are SMPI shared memory: 256 ranks x 45 MB would not fit otherwise. SMPI only.
   usage: allreduce BYTES [builtin | hierarchical N | ps SHARDS]
     builtin          MPI_Allreduce (pick SMPI's algorithm with --cfg=smpi/allreduce:...)
     hierarchical N   NCCL's 2D ring from SMPI collectives: reduce-scatter inside groups of N consecutive ranks,
                      an all-reduce of each 1/N shard across groups, an all-gather inside groups (run with
                      smpi/reduce_scatter:ompi_ring, smpi/allreduce:lr, smpi/allgather:ring)
     ps SHARDS        a sharded parameter server from point-to-point calls: every rank sends BYTES/SHARDS to each
                      shard (ranks j*P/SHARDS) but itself, the shards sum, then send it back */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The communicators are made before the timed region (NCCL builds its rings once). */
static void hierarchical(float* in, float* out, int count, int per_node, MPI_Comm node, MPI_Comm across) {
  const int shard = count / per_node;
  MPI_Reduce_scatter_block(in, out, shard, MPI_FLOAT, MPI_SUM, node);
  MPI_Allreduce(MPI_IN_PLACE, out, shard, MPI_FLOAT, MPI_SUM, across);
  MPI_Allgather(MPI_IN_PLACE, shard, MPI_FLOAT, out, shard, MPI_FLOAT, node);
}

static void parameter_server(float* in, float* out, int count, int shards) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int share = count / shards;
  MPI_Request* requests = (MPI_Request*)malloc(sizeof(MPI_Request) * (size_t)(2 * size + 2 * shards));
  int n = 0, my_shard = -1;
  for (int j = 0; j < shards; ++j) {
    const int host = (int)((long)j * size / shards);
    if (host == rank) my_shard = j;
    else MPI_Isend(in + (long)j * share, share, MPI_FLOAT, host, 0, MPI_COMM_WORLD, &requests[n++]);
  }
  if (my_shard >= 0) {
    for (int r = 0; r < size; ++r) {
      if (r != rank) MPI_Irecv(out, share, MPI_FLOAT, r, 0, MPI_COMM_WORLD, &requests[n++]);  /* sum not modelled */
    }
  }
  MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
  n = 0;
  for (int j = 0; j < shards; ++j) {
    const int host = (int)((long)j * size / shards);
    if (host != rank) MPI_Irecv(out + (long)j * share, share, MPI_FLOAT, host, 1, MPI_COMM_WORLD, &requests[n++]);
  }
  if (my_shard >= 0) {
    for (int r = 0; r < size; ++r) {
      if (r != rank) MPI_Isend(out + (long)my_shard * share, share, MPI_FLOAT, r, 1, MPI_COMM_WORLD, &requests[n++]);
    }
  }
  MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
  free(requests);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long bytes = argc > 1 ? atol(argv[1]) : 1000000;
  const char* mode = argc > 2 ? argv[2] : "builtin";
  const int param = argc > 3 ? atoi(argv[3]) : 1;
  const int count = (int)(bytes / 4);
  float* in = (float*)SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
  float* out = (float*)SMPI_SHARED_MALLOC((size_t)count * sizeof(float));
  MPI_Comm node = MPI_COMM_NULL, across = MPI_COMM_NULL;
  if (strcmp(mode, "hierarchical") == 0) {
    MPI_Comm_split(MPI_COMM_WORLD, rank / param, rank, &node);
    MPI_Comm_split(MPI_COMM_WORLD, rank % param, rank, &across);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (strcmp(mode, "hierarchical") == 0) {
    hierarchical(in, out, count, param, node, across);
  } else if (strcmp(mode, "ps") == 0) {
    parameter_server(in, out, count, param);
  } else {
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double mine = MPI_Wtime() - t0, slowest = 0.0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%.9f\n", slowest);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  if (across != MPI_COMM_NULL) MPI_Comm_free(&across);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
