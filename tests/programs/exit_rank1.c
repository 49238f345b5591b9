/* mbhybrid-test: np=2 exit=1 */
/* Rank 1 gives up with a nonzero status after the barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    fprintf(stderr, "rank 1: input is invalid\n");
    exit(3); // expect: exit rank=1
  }
  MPI_Finalize();
  return 0;
}
