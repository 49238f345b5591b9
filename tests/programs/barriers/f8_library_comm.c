/* F4a on a library communicator: the messages travel on a duplicate of
 * MPI_COMM_WORLD (whose handle differs between ranks under the runtime),
 * the barrier is on its parent. The barrier still keeps P2's send from
 * P0's wildcard receive: relevant. */
#include <mpi.h>
int main(int argc, char **argv) {
  int rank, x = 0, v = 0;
  MPI_Request h, s;
  MPI_Comm lib;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &lib);
  if (rank == 0) {
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, lib, &h);
    MPI_Wait(&h, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Recv(&x, 1, MPI_INT, 2, 0, lib, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    v = 33;
    MPI_Isend(&v, 1, MPI_INT, 0, 0, lib, &s);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Wait(&s, MPI_STATUS_IGNORE);
  } else {
    v = 22;
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Isend(&v, 1, MPI_INT, 0, 0, lib, &s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&lib);
  MPI_Finalize();
  return 0;
}
