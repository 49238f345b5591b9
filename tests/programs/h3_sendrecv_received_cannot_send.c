/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--buffering,zero,--timeout,60 */
/* Soak seed 4051's shape: three MPI_Sendrecv in a ring, each sending to the
 * next rank, where rank 0 receives from rank 1 (which sends to rank 2) and
 * so never receives. Without buffering, rank 2's send to rank 0 is never
 * taken; rank 1 receives and its send is taken by rank 2, so MPI's
 * Sendrecv returns on rank 1, which waits in MPI_Finalize for the others:
 * a deadlock of all three. The runtime used to acknowledge rank 1's
 * synchronous send on rank 2 only once rank 2's whole Sendrecv returned,
 * holding rank 1 in its Sendrecv, a wait the graph does not see: the run
 * ended at the timeout. Rank 2 now acknowledges as soon as its receive
 * half completes, and the graph confirms the deadlock. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, in = -1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int from = rank == 0 ? 1 : (rank + 2) % 3;
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % 3, 300, &in, 1, MPI_INT, from, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=0 rank=2
  printf("rank %d received %d\n", rank, in);
  MPI_Finalize(); // expect: deadlock rank=1
  return 0;
}
