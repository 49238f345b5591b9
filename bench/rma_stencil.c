/* bench/rma_stencil.c: bench/stencil.c's 2-D Jacobi stencil with its halo
 * exchanged by one-sided communication (issue 39's "RMA stencil (fence)"):
 * each rank exposes its grid, ROWS x COLS doubles plus two ghost rows, in
 * a window (two grids, two windows, used in turn), and each step puts its
 * two edge rows into the neighbours' ghost rows between two fences, then
 * updates its rows, and every 10th step takes the global residual with
 * MPI_Allreduce. By default the fences carry no assertion, as most codes
 * write them: every window stays in an epoch, and its memory is watched
 * the whole time. With a fourth argument `asserted`, the fence that opens
 * the exchange asserts MPI_MODE_NOPRECEDE and the one that ends it
 * MPI_MODE_NOSUCCEED (MPI-4.0 §12.5.5): no epoch is open while the rank
 * computes.
 *
 *   rma_stencil [STEPS [ROWS [COLS [asserted]]]]   (defaults 200 1024 1024)
 *
 * Rank 0 prints "kernel <seconds>" (the timed loop only) and
 * "residual <value>", which must be the same built plain or with
 * mbhybrid. */
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
  int asserted = argc > 4;
  int opening = asserted ? MPI_MODE_NOPRECEDE : 0;
  int closing = asserted ? MPI_MODE_NOSUCCEED : 0;
  size_t cells = (size_t)(rows + 2) * cols;
  double *grid[2];
  MPI_Win win[2];
  for (int g = 0; g < 2; g++) {
    MPI_Win_allocate((MPI_Aint)(cells * sizeof(double)), sizeof(double),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &grid[g], &win[g]);
    for (size_t k = 0; k < cells; k++)
      grid[g][k] = 0.0;
    /* A hot top edge on rank 0: heat flows down through every rank. */
    if (rank == 0)
      for (int j = 0; j < cols; j++)
        grid[g][j] = 100.0;
  }
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  double global = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int s = 0; s < steps; s++) {
    double *u = grid[s % 2], *v = grid[(s + 1) % 2];
    MPI_Win w = win[s % 2];
    MPI_Win_fence(opening, w);
    /* My first row is the upper neighbour's lower ghost row, my last the
     * lower neighbour's upper ghost row. */
    if (up != MPI_PROC_NULL)
      MPI_Put(u + (size_t)cols, cols, MPI_DOUBLE, up,
              (MPI_Aint)(rows + 1) * cols, cols, MPI_DOUBLE, w);
    if (down != MPI_PROC_NULL)
      MPI_Put(u + (size_t)rows * cols, cols, MPI_DOUBLE, down, 0, cols,
              MPI_DOUBLE, w);
    MPI_Win_fence(closing, w);
    double residual = 0.0;
    sweep(u, v, cols, 1, rows, &residual);
    if (rank == 0)
      for (int j = 0; j < cols; j++)
        v[j] = 100.0;
    if (s % 10 == 9)
      MPI_Allreduce(&residual, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double elapsed = MPI_Wtime() - start;
  if (rank == 0)
    printf("kernel %.6f\nresidual %.9e\n", elapsed, global);
  for (int g = 0; g < 2; g++)
    MPI_Win_free(&win[g]);
  MPI_Finalize();
  return 0;
}
