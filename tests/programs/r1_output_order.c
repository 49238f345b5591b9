/* mbhybrid-test: np=4 exit=0 interleavings=6 */
/* SCENARIOS.md R1 (seed 002): rank 0 prints the order in which the other
 * ranks' messages arrive; every order is a different output. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    char order[64];
    int n = 0;
    for (int i = 1; i < size; i++) {
      int from = 0;
      MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      n += snprintf(order + n, sizeof order - n, "%d", from);
    }
    printf("arrival order: %s\n", order);
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
