/* mbhybrid-test: np=2 exit=0 */
/* A persistent receive waited on a second time without MPI_Start: MPI
 * returns at once (the request is inactive), the tool reports it. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request req;
    MPI_Recv_init(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE); // expect: missing-start rank=0
    MPI_Request_free(&req);
  } else {
    v = 7;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
