/* The cost of watching window memory during exposure epochs (issue 39,
 * BENCHMARKS.md "Window memory under the access checks"): each rank's
 * window holds a ghost cell and 262,143 interior doubles; in each of 200
 * fence epochs its left neighbour puts one double into its ghost cell
 * while it sweeps its interior (a load and a store per element, every one
 * inside the exposed window, so every one reaches the runtime's check).
 * No race: the ghost cell is read only after the last fence. Rank 0
 * prints the seconds of the loop (MPI_Wtime). Run on 2 ranks by plain
 * mpiexec (the runtime linked but off) and by verify. */
#include <mpi.h>
#include <stdio.h>

#define N (1 << 18)
#define EPOCHS 200

int main(int argc, char **argv) {
  int rank, size;
  double *w;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &w, &win);
  for (int i = 0; i < N; i++)
    w[i] = i;
  double edge = rank;
  int right = (rank + 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int e = 0; e < EPOCHS; e++) {
    MPI_Put(&edge, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win);
    for (int i = 1; i < N; i++)
      w[i] = w[i] * 0.5 + 1.0;
    MPI_Win_fence(e == EPOCHS - 1 ? MPI_MODE_NOSUCCEED : 0, win);
  }
  double elapsed = MPI_Wtime() - start;
  if (rank == 0)
    printf("seconds %.3f ghost %g last %g\n", elapsed, w[0], w[N - 1]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
