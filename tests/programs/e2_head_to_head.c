/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--buffering,zero */
/* SCENARIOS.md E2 (seed 000 Fig 2.5): both ranks send first and wait for
 * the send to complete before receiving. With zero buffering neither send
 * can complete: deadlock. (With MPI's eager buffering the run completes,
 * and only a buffering-hazard analysis sees the problem.) */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, out = 7, in = 0;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int other = 1 - rank;
  MPI_Isend(&out, 1, MPI_INT, other, 0, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE); // expect: deadlock rank=0 rank=1
  MPI_Irecv(&in, 1, MPI_INT, other, 0, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
