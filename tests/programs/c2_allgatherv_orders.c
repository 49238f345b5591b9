/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* S11 with MPI_Allgatherv, which synchronises (every rank's output needs
 * every rank's input): P2's send comes after P2 left Allgatherv, so after
 * P1 entered it, so after P1's first wildcard receive completed. It is not
 * a potential match of that receive: only P0 is. (Before Allgatherv
 * carried clocks, P2 was listed, and the replay forcing it could never
 * happen.) */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, all[3], counts[3] = {1, 1, 1}, displs[3] = {0, 1, 2};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allgatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Allgatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
