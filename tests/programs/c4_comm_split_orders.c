/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* S11 with MPI_Comm_split, which synchronises the clocks of the parent's
 * ranks (DESIGN.md: communicator constructors exchange clocks to the
 * maximum): P2's send follows the split, so P1's first wildcard receive,
 * and only P0 can match that receive. The new communicator then carries a
 * broadcast (its own clock and signature shadows) and is freed. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Comm half;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
    MPI_Bcast(&v, 1, MPI_INT, 0, half);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
    MPI_Bcast(&v, 1, MPI_INT, 0, half);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
    MPI_Bcast(&v, 1, MPI_INT, 0, half);
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
