/* mbhybrid-test: np=4 exit=0 */
/* SCENARIOS.md S6 (seed 000 Fig 5.3): P2's first wildcard receive can take
 * P0's or P1's message; Lamport clocks may miss P0 (the omission the
 * dissertation describes), vector clocks find both. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 3) {
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Send(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
