/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 40: an MPI call from inside a callback MPI runs is legal; the
 * common one, MPI_Abort from the program's error handler, is followed:
 * the report is the program's abort, at the handler's call. */
#include <mpi.h>

static void stop(MPI_Comm *comm, int *code, ...) {
  MPI_Abort(*comm, 7); // expect: assertion rank=0
}

int main(int argc, char **argv) {
  int rank, v = 1;
  MPI_Errhandler handler;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_create_errhandler(stop, &handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  if (rank == 0)
    MPI_Send(&v, 1, MPI_INT, 5, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
