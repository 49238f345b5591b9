/* mbhybrid-test: np=2 exit=1 */
/* Nonblocking collectives in different orders: P0 starts MPI_Ibcast, P1
 * MPI_Ibarrier. MPI matches nonblocking collectives in the order they
 * start, so these two are matched together. The signature check started
 * with each call reports it, whichever call waits. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 1;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &request); // expect: collective-mismatch rank=0
  } else {
    MPI_Ibarrier(MPI_COMM_WORLD, &request); // expect: collective-mismatch rank=1
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
