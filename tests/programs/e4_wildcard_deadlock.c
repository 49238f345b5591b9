/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* SCENARIOS.md E4 (seed 000 Fig 2.7): when P1's wildcard receive takes
 * P2's message, its second receive waits for a second message from P2
 * that never comes. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
  } else {
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
