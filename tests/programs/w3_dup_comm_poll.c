/* mbhybrid-test: np=3 exit=0 interleavings=2 */
/* A library communicator (MPI_Comm_dup) and a wildcard MPI_Irecv polled
 * with MPI_Test: either sender can be first. Handles are local, and under
 * the runtime rank 0 numbers this communicator differently from the
 * others (it made more communicators of its own before): the traces must
 * still put both sends and the receive on one communicator. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, w = 0, flag = 0;
  MPI_Comm lib;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &lib);
  if (rank == 0) {
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, lib, &r); // polled
    while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 7, lib, MPI_STATUS_IGNORE);
    printf("sum %d\n", v + w);
  } else {
    v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 7, lib);
  }
  MPI_Comm_free(&lib);
  MPI_Finalize();
  return 0;
}
