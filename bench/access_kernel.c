/* Issue 19: the cost of the load and store checks `mbhybrid build` inserts
 * (BENCHMARKS.md, "Access checks"). A 1-D stencil over two 8 MiB arrays,
 * ITERS times, on every rank: first with no request pending (each access
 * pays the check's load and branch), then with a halo exchange pending
 * during the sweep (each access calls the runtime's check, which finds
 * nothing: the arrays are not the halo buffers). Build it once with
 * `mpicc -O2` (run with the runtime preloaded) and once with
 * `mbhybrid build -- -O2`; rank 0 prints the seconds of each phase. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)
#define HALO 64

static double a[N], b[N];
static double out_halo[HALO], in_halo[HALO];

static void sweep(double *from, double *to) {
  for (int i = 1; i < N - 1; i++) to[i] = 0.25 * (from[i - 1] + 2 * from[i] + from[i + 1]);
}

int main(int argc, char **argv) {
  int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20;
  MPI_Request requests[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int peer = (rank ^ 1) < size ? (rank ^ 1) : rank;
  for (int i = 0; i < N; i++) a[i] = i % 7, b[i] = 0; /* no page faults in the timing */
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) {
    sweep(it % 2 ? b : a, it % 2 ? a : b);
    MPI_Sendrecv(out_halo, HALO, MPI_DOUBLE, peer, 0, in_halo, HALO, MPI_DOUBLE, peer, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  double t1 = MPI_Wtime();
  for (int it = 0; it < iters; it++) {
    MPI_Irecv(in_halo, HALO, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(out_halo, HALO, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &requests[1]);
    sweep(it % 2 ? b : a, it % 2 ? a : b);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  }
  double t2 = MPI_Wtime();
  if (rank == 0)
    printf("nothing pending: %.3f s, halo pending: %.3f s (checksum %g)\n", t1 - t0, t2 - t1,
           a[N / 2] + b[N / 3]);
  MPI_Finalize();
  return 0;
}
