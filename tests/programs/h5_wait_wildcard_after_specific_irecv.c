/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--timeout,60 */
/* Soak seed 4220's shape: rank 0 posts a receive from rank 1, then a
 * wildcard one, and waits on the wildcard. Rank 1's one message goes to
 * the receive posted first (MPI matches a sender's message with the
 * earliest posted receive that accepts it), so the wildcard gets nothing,
 * and ranks 1 and 2 wait in the barrier for rank 0. The runtime processes
 * the first receive's completion only when the program waits on it, so the
 * wait-for graph used to count rank 1's message as still takeable by the
 * wildcard ("slow, not stuck") and left the hang to the timeout; it now
 * follows MPI's matching order and confirms the deadlock. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, first = 0, any = 0, out = 7;
  MPI_Request requests[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&first, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&any, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &requests[1]); // expect: deadlock rank=0
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE); // expect: deadlock rank=0
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Send(&out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD); // expect: deadlock rank=1 rank=2
  printf("rank %d: %d %d\n", rank, first, any);
  MPI_Finalize();
  return 0;
}
