/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 11 on a split communicator: P0 and P2 share one (P1 is alone in
 * the other). P0 waits on an MPI_Iallreduce on it that P2 posts only after
 * a message that comes, through P1, from what P0 sends after its wait. P0
 * waits for P2 only (P1 is no member), P2 for P1, P1 for P0. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, sum = 0;
  MPI_Comm half;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  if (rank == 0) {
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half, &request); // expect: deadlock rank=0
    MPI_Wait(&request, MPI_STATUS_IGNORE);                         // expect: deadlock rank=0
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Send(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=2
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
