/* mbhybrid-test: np=3 exit=0 interleavings=2 */
/* SCENARIOS.md S11 with MPI_Gatherv: a non-root may leave MPI_Gatherv
 * before the root enters it, so P2's send can match P1's first wildcard
 * receive. Gatherv's clocks flow to the root only; making it
 * synchronising would hide the match. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, all[3], counts[3] = {1, 1, 1}, displs[3] = {0, 1, 2};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
