/* Fib benchmark: a 1-D diffusion with halo exchanges, a residual gathered
 * by rank 0 with wildcard receives, and two barriers per step. STEPS (the
 * argument) sets the trace length: about 8 MPI calls per rank per step. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define CELLS 64
int main(int argc, char **argv) {
  int rank, size, steps = argc > 1 ? atoi(argv[1]) : 100;
  double u[CELLS + 2] = {0}, next[CELLS + 2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) u[1] = 100.0;
  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  for (int step = 0; step < steps; step++) {
    MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[CELLS + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&u[CELLS], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double residual = 0;
    for (int i = 1; i <= CELLS; i++) {
      next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
      residual += next[i] - u[i];
    }
    for (int i = 1; i <= CELLS; i++) u[i] = next[i];
    if (rank == 0) {
      double total = residual, r;
      for (int i = 1; i < size; i++) {
        MPI_Recv(&r, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        total += r;
      }
    } else {
      MPI_Send(&residual, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
