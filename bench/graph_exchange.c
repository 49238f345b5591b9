/* bench/graph_exchange.c: the communication of a distributed graph code
 * (partition refinement, label propagation): many small messages
 * (issue 13's "kernel of many small messages": 95% of them 4-256 B).
 *
 * Each rank owns VERTICES vertices with labels; every rank is a neighbour
 * of every other (a partitioned graph whose parts all touch, the worst
 * case for message count). Each round:
 *   1. each rank relaxes its labels (a few operations per vertex);
 *   2. for each neighbour, it sends the labels of the boundary vertices
 *      that changed: a count first (MPI_Alltoall), then one MPI_Isend of
 *      that many ints per non-empty pair, received with MPI_Irecv and
 *      completed by MPI_Waitall, then applied;
 *   3. every 5th round, MPI_Allreduce of the number of changes, as a
 *      convergence test.
 * The boundary sizes are drawn so that 95% of the messages carry 1-64
 * ints (4-256 B) and 5% carry 1,024-4,096 (4-16 KiB), from a fixed seed,
 * so the plain and the traced build send the same messages.
 *
 *   graph_exchange [ROUNDS [VERTICES]]   (defaults 2000 20000)
 *
 * Rank 0 prints "kernel <seconds>" (the timed loop only), "messages <n>"
 * (sent by rank 0), "small <percent>" (of them 4-256 B) and
 * "checksum <value>", which must be the same built plain or with
 * mbhybrid. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* A small deterministic generator (xorshift), so both builds draw the same. */
static unsigned next_random(unsigned *state) {
  unsigned x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

/* How many labels go to one neighbour this round. */
static int boundary_count(unsigned *state) {
  unsigned draw = next_random(state);
  if (draw % 100 < 95) return 1 + (int)(draw / 100 % 64);
  return 1024 + (int)(draw / 100 % 3073);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  int vertices = argc > 2 ? atoi(argv[2]) : 20000;
  int *labels = malloc(vertices * sizeof *labels);
  for (int v = 0; v < vertices; v++) labels[v] = rank * vertices + v;
  int *send_counts = calloc(size, sizeof(int)), *recv_counts = calloc(size, sizeof(int));
  int *out = malloc(size * 4096 * sizeof(int)), *in = malloc(size * 4096 * sizeof(int));
  MPI_Request *requests = malloc(2 * size * sizeof *requests);
  unsigned state = 2463534242u + 7919u * (unsigned)rank;
  long messages = 0, small = 0, checksum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int r = 0; r < rounds; r++) {
    long changed = 0;
    for (int v = 1; v < vertices; v++) {
      int candidate = labels[v - 1] < labels[v] ? labels[v - 1] : labels[v];
      changed += candidate != labels[v];
      labels[v] = candidate ^ (r & 1);
    }
    for (int p = 0; p < size; p++)
      send_counts[p] = p == rank ? 0 : boundary_count(&state);
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    int n = 0;
    for (int p = 0; p < size; p++) {
      if (recv_counts[p] > 0)
        MPI_Irecv(in + p * 4096, recv_counts[p], MPI_INT, p, r, MPI_COMM_WORLD, &requests[n++]);
    }
    for (int p = 0; p < size; p++) {
      if (send_counts[p] == 0) continue;
      for (int k = 0; k < send_counts[p]; k++)
        out[p * 4096 + k] = labels[(k * 31 + r) % vertices];
      MPI_Isend(out + p * 4096, send_counts[p], MPI_INT, p, r, MPI_COMM_WORLD, &requests[n++]);
      messages++;
      small += send_counts[p] <= 64;
    }
    MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
    for (int p = 0; p < size; p++)
      for (int k = 0; k < recv_counts[p]; k++) {
        int v = (k * 17 + p) % vertices;
        if (in[p * 4096 + k] < labels[v]) labels[v] = in[p * 4096 + k];
        checksum += in[p * 4096 + k] & 0xff;
      }
    if (r % 5 == 4) {
      long total = 0;
      MPI_Allreduce(&changed, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double elapsed = MPI_Wtime() - start;
  if (rank == 0)
    printf("kernel %.6f\nmessages %ld\nsmall %.1f\nchecksum %ld\n", elapsed, messages,
           100.0 * small / messages, checksum);
  free(labels); free(send_counts); free(recv_counts); free(out); free(in); free(requests);
  MPI_Finalize();
  return 0;
}
