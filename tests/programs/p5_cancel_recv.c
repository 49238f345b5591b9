/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* MPI_Cancel of a wildcard receive no message matches (an MPI_Irecv, then
 * a started MPI_Recv_init): it completes cancelled, makes no wildcard
 * decision, and the program carries on. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, cancelled = 0;
  MPI_Request req;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &cancelled);
    printf("cancelled %d\n", cancelled);
    MPI_Recv_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, 98, MPI_COMM_WORLD, &req);
    MPI_Start(&req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    printf("persistent cancelled %d\n", cancelled);
    MPI_Request_free(&req);
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("got %d\n", v);
  } else {
    v = 5;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
