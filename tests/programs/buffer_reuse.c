/* mbhybrid-test: np=2 exit=1 */
/* DESIGN.md "Local checks", buffer-reuse: rank 0 writes to the buffer of a
 * nonblocking send before the wait that completes it. Reported at the write
 * (issue 19; the comparison at the wait finds it too, reported once) with
 * the send's line; the writes after a completed MPI_Wait or a successful
 * MPI_Test (legal reuse) are not. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, buf[2] = {1, 2}, flag = 0;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Isend(buf, 2, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    buf[0] = 3; /* after the wait: fine */
    MPI_Isend(buf, 2, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    while (!flag) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    buf[0] = 4; /* after a successful test: fine */
    MPI_Isend(buf, 2, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    buf[0] = 5; /* while the send may still read it */ // expect: buffer-reuse rank=0
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    for (int i = 0; i < 3; i++) {
      MPI_Recv(buf, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("got %d\n", buf[0]);
    }
  }
  MPI_Finalize();
  return 0;
}
