/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 11 (c): P0 waits on an MPI_Ibarrier that P1 posts only after a
 * message P0 sends after its wait: P1 is blocked in MPI_Recv and never
 * posts the barrier. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Request barrier;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier); // expect: deadlock rank=0
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);  // expect: deadlock rank=0
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
