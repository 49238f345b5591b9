/* mbhybrid-test: np=2 exit=1 */
/* Rank 0 receives the reply into the buffer of its own MPI_Isend before
 * that send completes: the reply may overwrite the data before MPI has
 * sent it (MPI-4.0 §3.7.2). Reported at the receive, with the send's
 * line. The exchange itself is sound: rank 1 receives before it replies. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, data[4] = {1, 2, 3, 4};
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Isend(data, 4, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    MPI_Recv(data, 4, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: buffer-reuse rank=0
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    printf("reply %d\n", data[0]);
  } else {
    int got[4];
    MPI_Recv(got, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++) got[i] *= 10;
    MPI_Send(got, 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
