/* bench/stencil.c: a 2-D Jacobi heat stencil, decomposed by rows, with
 * the compute/communication ratio of a real one (issue 13's "halo-exchange
 * stencil kernel"). Each rank holds ROWS x COLS doubles plus two ghost
 * rows; each step posts the two ghost rows' Irecv and the two edge rows'
 * Isend, updates the interior while they are in flight, waits
 * (MPI_Waitall), updates the two edge rows, and every 10th step takes the
 * global residual with MPI_Allreduce.
 *
 * With the default 1024 x 1024 local grid a step sweeps 8 MiB and sends
 * two 8 KiB rows each way: about 1 ms of compute against a few µs of
 * messages, the ratio of a production stencil at this size.
 *
 *   stencil [STEPS [ROWS [COLS]]]   (defaults 200 1024 1024)
 *
 * Rank 0 prints "kernel <seconds>" (the timed loop only, launch and
 * MPI_Init excluded) and "residual <value>", which must be the same built
 * plain or with mbhybrid. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void sweep(const double *u, double *v, int cols, int first, int last,
                  double *residual) {
  for (int i = first; i <= last; i++) {
    const double *up = u + (size_t)(i - 1) * cols, *row = u + (size_t)i * cols,
                 *down = u + (size_t)(i + 1) * cols;
    double *out = v + (size_t)i * cols;
    out[0] = row[0];
    out[cols - 1] = row[cols - 1];
    for (int j = 1; j < cols - 1; j++) {
      out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
      *residual += fabs(out[j] - row[j]);
    }
  }
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int steps = argc > 1 ? atoi(argv[1]) : 200;
  int rows = argc > 2 ? atoi(argv[2]) : 1024;
  int cols = argc > 3 ? atoi(argv[3]) : 1024;
  size_t cells = (size_t)(rows + 2) * cols;
  double *u = malloc(cells * sizeof *u), *v = malloc(cells * sizeof *v);
  for (size_t k = 0; k < cells; k++) u[k] = v[k] = 0.0;
  /* A hot top edge on rank 0: heat flows down through every rank. */
  if (rank == 0)
    for (int j = 0; j < cols; j++) u[j] = v[j] = 100.0;
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  double global = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int s = 0; s < steps; s++) {
    MPI_Request halo[4];
    MPI_Irecv(u, cols, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &halo[0]);
    MPI_Irecv(u + (size_t)(rows + 1) * cols, cols, MPI_DOUBLE, down, 1,
              MPI_COMM_WORLD, &halo[1]);
    MPI_Isend(u + (size_t)cols, cols, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
              &halo[2]);
    MPI_Isend(u + (size_t)rows * cols, cols, MPI_DOUBLE, down, 0,
              MPI_COMM_WORLD, &halo[3]);
    double residual = 0.0;
    /* Rows 2..rows-1 need no ghost; rows 1 and `rows` wait for the halo.
     * The edge rows are being sent, so they are only read meanwhile. */
    sweep(u, v, cols, 2, rows - 1, &residual);
    MPI_Waitall(4, halo, MPI_STATUSES_IGNORE);
    sweep(u, v, cols, 1, 1, &residual);
    sweep(u, v, cols, rows, rows, &residual);
    if (rank == 0)
      for (int j = 0; j < cols; j++) v[j] = 100.0;
    double *t = u;
    u = v;
    v = t;
    if (s % 10 == 9)
      MPI_Allreduce(&residual, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double elapsed = MPI_Wtime() - start;
  if (rank == 0) printf("kernel %.6f\nresidual %.9e\n", elapsed, global);
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
