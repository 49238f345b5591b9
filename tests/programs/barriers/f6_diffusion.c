/* SCENARIOS.md F6: a 1-D diffusion with halo exchanges and no wildcard
 * receive; its barriers order nothing nondeterministic: all irrelevant. */
#include <mpi.h>
#include <stdio.h>
#define CELLS 16
int main(int argc, char **argv) {
  int rank, size;
  double u[CELLS + 2] = {0}, next[CELLS + 2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) u[1] = 100.0;
  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  for (int step = 0; step < 4; step++) {
    MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[CELLS + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&u[CELLS], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    for (int i = 1; i <= CELLS; i++) next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
    for (int i = 1; i <= CELLS; i++) u[i] = next[i];
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  }
  double local = 0, total = 0;
  for (int i = 1; i <= CELLS; i++) local += u[i];
  MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("heat %.3f\n", total);
  MPI_Finalize();
  return 0;
}
