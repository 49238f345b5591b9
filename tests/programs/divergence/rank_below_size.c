/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37: two collectives under `if (rank < nprocs)`, always true: a
 * rank is below its communicator's size (MPI 4.1 §6.4.1), so every
 * comparison of the two decides nothing. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int nprocs = -1, rank = -1, x = 1, y = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank < nprocs) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  if (nprocs != rank)
    MPI_Bcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD);
  printf("rank %d: %d\n", rank, y);
  MPI_Finalize();
  return 0;
}
