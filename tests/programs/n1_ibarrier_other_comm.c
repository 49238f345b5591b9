/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 11 (a): the ranks start MPI_Ibarrier on different communicators
 * (MPI_COMM_WORLD and a duplicate of it) and wait on it. Neither barrier
 * ever has all its members: each rank waits for the other (seed 003, an
 * AND node per wait), and the wait-for graph confirms it at once instead
 * of the run ending at the timeout. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Comm dup;
  MPI_Request barrier;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0) {
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier); // expect: deadlock rank=0
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);  // expect: deadlock rank=0
  } else {
    MPI_Ibarrier(dup, &barrier);           // expect: deadlock rank=1
    MPI_Wait(&barrier, MPI_STATUS_IGNORE); // expect: deadlock rank=1
  }
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
