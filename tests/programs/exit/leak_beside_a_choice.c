/* mbhybrid-test: np=3 exit=0 interleavings=2 */
/* Issue 37: a warning (a datatype never freed) beside a wildcard receive
 * with two possible senders. Correct apart from the leak: verify exits 0
 * (warnings never fail a run unless `--deny warnings`), and a search cut
 * short exits 3 although it found the warning. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Datatype pair;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair); // expect: resource-leak rank=0
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
