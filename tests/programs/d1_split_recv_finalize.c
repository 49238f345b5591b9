/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 16: rank 2 receives on a communicator split in reverse rank order
 * (world rank r is rank 2 - r there) from the split's rank 2, world rank
 * 0. Rank 0 sent the message on MPI_COMM_WORLD instead and went on to
 * MPI_Finalize, which waits for every rank. The wait-for graph translates
 * the split's ranks to world ranks and confirms the deadlock at once
 * instead of the run ending at the timeout. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, value = 42;
  MPI_Comm reversed;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, 0, 2 - rank, &reversed);
  if (rank == 0)
    MPI_Send(&value, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  else if (rank == 2)
    MPI_Recv(&value, 1, MPI_INT, 2, 0, reversed, MPI_STATUS_IGNORE); // expect: deadlock rank=2
  MPI_Comm_free(&reversed);
  MPI_Finalize(); // expect: deadlock rank=0
  return 0;
}
