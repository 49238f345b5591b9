/* mbhybrid-test: np=2 exit=0 */
/* Issue 17 item 3: the local checks of a program built by plain `mpicc`
 * (tests/e2e/mpicc_builds.rs). `MPI_Comm_dup` has no record of its own: the
 * leak names it from the runtime's record of the call's site. Rank 0 never
 * completes its `MPI_Isend`. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 5;
  MPI_Comm copy;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &copy); // expect: resource-leak rank=0 rank=1
  if (rank == 0) {
    MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req); // expect: request-leak rank=0
  } else {
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
