/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* S11 with MPI_Ibarrier completed by MPI_Wait (P0), an MPI_Test loop (P1)
 * and MPI_Waitall (P2): the barrier's clocks, exchanged from each rank's
 * call, are merged where its request completes. P2's send follows its
 * Waitall, so P1's Ibarrier, so P1's first wildcard receive: only P0 can
 * match that receive. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, done = 0;
  MPI_Request barrier;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    while (!done)
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Waitall(1, &barrier, MPI_STATUSES_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
