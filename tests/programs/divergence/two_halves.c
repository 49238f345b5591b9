/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 38: two rank-guarded barriers that are the two halves of one
 * agreement: with a second argument, rank 0 makes the first and the
 * others the second. Neither is certain to diverge, so verify warns
 * about each and calls neither an error. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && argc > 2)
    MPI_Barrier(MPI_COMM_WORLD); // expect: collective-divergence rank=0
  if (rank != 0 && argc > 2)
    MPI_Barrier(MPI_COMM_WORLD); // expect: collective-divergence rank=0
  MPI_Finalize();
  return 0;
}
