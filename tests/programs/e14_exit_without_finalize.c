/* mbhybrid-test: np=2 exit=1 */
/* Issue 12: rank 1 returns from main after MPI_Init without
 * MPI_Finalize. That is a finding every time (it once passed as clean in
 * 2 runs of 3, listed as "finalized"), and the leak checks MPI_Finalize
 * would have run still run: the Irecv is never completed. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 1;
  MPI_Request rq;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Irecv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &rq); // expect: request-leak rank=1
    MPI_Barrier(MPI_COMM_SELF); // expect: exit rank=1
    return 0;
  }
  MPI_Finalize();
  return 0;
}
