/* mbhybrid-test: np=2 exit=0 */
/* SCENARIOS.md E7 (seed 000 Fig 2.8): rank 0 never completes its Isend's
 * request, and both ranks commit a datatype they never free. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 5;
  MPI_Datatype pair;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair); // expect: resource-leak rank=0 rank=1
  if (rank == 0) {
    MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req); // expect: request-leak rank=0
  } else {
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
