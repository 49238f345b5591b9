/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 38: rank 0 alone makes the barrier, and only when the program is
 * given two arguments. Run without them, no rank reaches it, yet whenever
 * an input does, rank 1 skips it (every path to it passes `rank == 0`):
 * verify reports an error with the barrier and the branch; run with them,
 * the job deadlocks. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && argc > 2)
    MPI_Barrier(MPI_COMM_WORLD); // expect: collective-divergence rank=0
  MPI_Finalize();
  return 0;
}
