/* mbhybrid-test: np=3 exit=1 */
/* Rank 2 detects a bad value and calls MPI_Abort: an intended failure of
 * the program, reported as `assertion` at the MPI_Abort call. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, value = 5;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 2 && value == 5) {
    MPI_Abort(MPI_COMM_WORLD, 17); // expect: assertion rank=2
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
