/* mbhybrid-test: np=3 exit=1 */
/* SCENARIOS.md E6 (seed 001 Fig 8): with buffered sends P0's send to P1
 * completes at once, so P0's send to P2 can reach P2's wildcard Irecv
 * first; then P2's Irecv from P0 never gets a message. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, w = 0;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Isend(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Isend(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Irecv(&w, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Irecv(&w, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE); // expect: deadlock rank=2
  }
  MPI_Finalize();
  return 0;
}
