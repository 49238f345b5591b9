/* mbhybrid-test: np=4 exit=3 options=--max-interleavings=3 */
/* Issue 37: a search long enough to be stopped: rank 0 takes three
 * messages from each other rank through wildcard receives (9!/(3!3!3!) =
 * 1,680 orders on 4 ranks), and checks nothing. The stop tests send the
 * search SIGTERM once its progress shows. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, v, i, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (i = 0; i < 3 * (size - 1); i++) {
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += v;
    }
    printf("sum %d\n", sum);
  } else {
    for (i = 0; i < 3; i++)
      MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
