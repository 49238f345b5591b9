/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 38: the ranks below a number the user gives make the barrier.
 * Run without it, no rank reaches the barrier; with `1` only rank 0 would,
 * with `2` both would: the ranks may agree, so verify warns (both lines)
 * and does not call it an error. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int below = argc > 1 ? atoi(argv[1]) : 0;
  if (rank < below)
    MPI_Barrier(MPI_COMM_WORLD); // expect: collective-divergence rank=0
  MPI_Finalize();
  return 0;
}
