/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--buffering,zero,--timeout,60 */
/* Soak seed 3945: a Waitall whose first send was received and whose second
 * never is. Rank 0 sends two messages with MPI_Isend and completes both
 * with MPI_Waitall; rank 1 receives the first, then waits for a message of
 * another tag that rank 0 sends only after its Waitall. Without buffering
 * the second send cannot complete: each rank waits for the other. The
 * wait-for graph used to treat a Waitall as waiting for any one of its
 * requests, saw the first could complete, and left the hang to the
 * timeout; it now confirms the deadlock and names the stuck send. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, a = 1, b = 2, in = 0;
  MPI_Request requests[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Isend(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&b, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[1]); // expect: deadlock rank=0
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); // expect: deadlock rank=0
    MPI_Send(&a, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&in, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Recv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
