/* Two consecutive barriers that each order P0's wildcard receive before
 * P2's send, so that each alone is irrelevant (the other keeps the order)
 * while deleting both lets P2's message race P1's for the receive. The
 * audit keeps the second: irrelevant, then relevant once the first is
 * deleted. */
#include <mpi.h>
int main(int argc, char **argv) {
  int rank, x = 0, v = 0;
  MPI_Request h;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &h);
    MPI_Wait(&h, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    v = 33;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  if (rank == 2) {
    v = 22;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
