/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* SCENARIOS.md E5 (seed 001 Fig 7): if P2's wildcard Irecv takes P1's
 * message (sent after the barrier), the final Recv from P1 never gets one. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, w = 0;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Isend(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Recv(&w, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=2
  }
  MPI_Finalize();
  return 0;
}
