/* Point-to-point microbenchmarks for BENCHMARKS.md: ping-pong latency and
 * bandwidth between ranks 0 and 1 (1 B to 1 MiB), and the message rate of
 * every rank sending to its neighbour in a ring. The other ranks, if any,
 * take part only in the message-rate test. Each result is the best of
 * REPS repetitions: the machine is shared, and the best repetition is the
 * one least disturbed by other work. Prints one line per result:
 *   latency <bytes> <microseconds one way>
 *   bandwidth <bytes> <MB/s>
 *   rate <messages per second per rank>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 5

static double pingpong(char *buf, int bytes, int iterations, int rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iterations; i++) {
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - start) / iterations / 2.0;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  char *buf = calloc(1 << 20, 1);
  for (int bytes = 1; bytes <= (1 << 20); bytes *= 16) {
    int iterations = (bytes <= 4096 ? 20000 : bytes <= 65536 ? 2000 : 200) * scale / 10;
    if (iterations < 20) iterations = 20;
    pingpong(buf, bytes, iterations / 10 + 1, rank); /* warm up */
    double one_way = 1e9;
    for (int r = 0; r < REPS; r++) {
      double t = pingpong(buf, bytes, iterations / REPS + 1, rank);
      if (t < one_way) one_way = t;
    }
    if (rank == 0) {
      printf("latency %d %.3f\n", bytes, one_way * 1e6);
      printf("bandwidth %d %.1f\n", bytes, bytes / one_way / 1e6);
    }
  }
  /* Message rate: 64 nonblocking 8-byte messages to the next rank, 64 from
   * the previous, completed with Waitall; repeated. */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int windows = 2000 * scale / 10 / REPS + 1;
  MPI_Request reqs[128];
  double elapsed = 1e9;
  for (int r = 0; r < REPS; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int w = 0; w < windows; w++) {
      for (int i = 0; i < 64; i++) {
        MPI_Irecv(buf + 8 * i, 8, MPI_CHAR, prev, 1, MPI_COMM_WORLD, &reqs[i]);
        MPI_Isend(buf + 8 * (64 + i), 8, MPI_CHAR, next, 1, MPI_COMM_WORLD, &reqs[64 + i]);
      }
      MPI_Waitall(128, reqs, MPI_STATUSES_IGNORE);
    }
    /* Every rank takes rank 0's time, so all agree on the best repetition. */
    double t = MPI_Wtime() - start;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (t < elapsed) elapsed = t;
  }
  if (rank == 0) printf("rate %.0f\n", windows * 64 / elapsed);
  free(buf);
  MPI_Finalize();
  return 0;
}
