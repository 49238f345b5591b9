/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* E4 the other way round: P0 sends only after hearing from P2, so P1's
 * wildcard receive almost always takes P2's message first, and the first
 * run deadlocks (P1 then waits for a second message from P2). P0's message
 * is never received in that run, so no clock can report it; the
 * exploration must still find it (from the run's matches-before order)
 * and run the interleaving where the wildcard takes it, which completes. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // wildcard
    MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
  } else if (rank == 2) {
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
