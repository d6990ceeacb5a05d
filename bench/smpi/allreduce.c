/* One all-reduce of BYTES bytes (MPI_FLOAT sum) after a barrier; rank 0 prints the simulated seconds it took (the
   slowest rank's). Buffers are SMPI shared memory: 256 ranks x 45 MB would not fit otherwise. SMPI only.
   usage: allreduce BYTES [builtin | hierarchical N | ps SHARDS]
     builtin          MPI_Allreduce (pick SMPI's algorithm with --cfg=smpi/allreduce:...)
     hierarchical N   NCCL's 2D ring from SMPI collectives: reduce-scatter inside groups of N consecutive ranks,
                      an all-reduce of each 1/N shard across groups, an all-gather inside groups (run with
                      smpi/reduce_scatter:ompi_ring, smpi/allreduce:lr, smpi/allgather:ring)
     tree CHUNKS      NCCL's double binary tree (ncclGetDtree) from point-to-point calls: half the bytes on each tree,
                      CHUNKS chunks reduced up both trees, then broadcast down them
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

/* ncclGetBtree's parent of `rank` (-1 at the root, rank 0). */
static int btree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit;
  for (bit = 1; bit < n; bit <<= 1) {
    if (bit & rank) break;
  }
  int up = (rank ^ bit) | (bit << 1);
  return up >= n ? rank ^ bit : up;
}

/* ncclGetDtree: tree 0 is the btree; tree 1 the btree over mirrored (even count) or shifted (odd count) ranks. */
static int dtree_parent(int n, int tree, int rank) {
  if (tree == 0) return btree_parent(n, rank);
  const int virt = n % 2 == 1 ? (rank - 1 + n) % n : n - 1 - rank;
  const int up = btree_parent(n, virt);
  return up < 0 ? -1 : (n % 2 == 1 ? (up + 1) % n : n - 1 - up);
}

/* The two trees progress independently (NCCL runs them on separate channels): each tree steps through its reduce
   chunks, then its broadcast chunks; a step waits for its receives only (children going up, the parent going down),
   then starts its sends without waiting for them. */
static void double_tree(float* in, float* out, int count, int chunks) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int up[2], down[2][2];
  for (int t = 0; t < 2; ++t) {
    up[t] = dtree_parent(size, t, rank);
    down[t][0] = down[t][1] = -1;
    for (int r = 0, k = 0; r < size && k < 2; ++r) {
      if (dtree_parent(size, t, r) == rank) down[t][k++] = r;
    }
  }
  const int half = count / 2, chunk = half / chunks, steps = 2 * chunks;
  MPI_Request* sends = (MPI_Request*)malloc(sizeof(MPI_Request) * (size_t)(4 * steps));
  int ns = 0;
  MPI_Request recvs[4]; /* tree t uses slots 2t and 2t+1 */
  int step[2] = {0, 0}, pending[2] = {0, 0};
  for (int i = 0; i < 4; ++i) recvs[i] = MPI_REQUEST_NULL;
  /* Posts tree t's receives for its current step; returns how many. */
#define POST(t)                                                                                           \
  do {                                                                                                    \
    const int c = step[t] % chunks, phase = step[t] / chunks;                                              \
    float* rbuf = out + (long)(t) * half + (long)c * chunk;                                                \
    pending[t] = 0;                                                                                       \
    if (phase == 0) {                                                                                     \
      for (int i = 0; i < 2; ++i) {                                                                       \
        if (down[t][i] >= 0) {                                                                            \
          MPI_Irecv(rbuf, chunk, MPI_FLOAT, down[t][i], t, MPI_COMM_WORLD, &recvs[2 * (t) + i]);          \
          ++pending[t];                                                                                   \
        }                                                                                                 \
      }                                                                                                   \
    } else if (up[t] >= 0) {                                                                              \
      MPI_Irecv(rbuf, chunk, MPI_FLOAT, up[t], 2 + (t), MPI_COMM_WORLD, &recvs[2 * (t)]);                  \
      ++pending[t];                                                                                       \
    }                                                                                                     \
  } while (0)
  int live = 2;
  for (int t = 0; t < 2; ++t) POST(t);
  while (live > 0) {
    for (int t = 0; t < 2; ++t) {
      while (step[t] < steps && pending[t] == 0) { /* the step's inputs are in: send, go on */
        const int c = step[t] % chunks, phase = step[t] / chunks;
        float* sbuf = in + (long)t * half + (long)c * chunk;
        if (phase == 0) {
          if (up[t] >= 0) MPI_Isend(sbuf, chunk, MPI_FLOAT, up[t], t, MPI_COMM_WORLD, &sends[ns++]);
        } else {
          for (int i = 0; i < 2; ++i) {
            if (down[t][i] >= 0) MPI_Isend(sbuf, chunk, MPI_FLOAT, down[t][i], 2 + t, MPI_COMM_WORLD, &sends[ns++]);
          }
        }
        if (++step[t] == steps) {
          --live;
        } else {
          POST(t);
        }
      }
    }
    if (live == 0) break;
    int index = MPI_UNDEFINED;
    MPI_Waitany(4, recvs, &index, MPI_STATUS_IGNORE);
    if (index != MPI_UNDEFINED) --pending[index / 2];
  }
#undef POST
  MPI_Waitall(ns, sends, MPI_STATUSES_IGNORE);
  free(sends);
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
  } else if (strcmp(mode, "tree") == 0) {
    double_tree(in, out, count, param);
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
