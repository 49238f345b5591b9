/* mbhybrid-test: np=2 exit=1 */
/* Issue 19, seed 000 §2.3.6.3 (Fig 2.9), SCENARIOS.md E9: rank 1 reads the
 * buffer of its MPI_Irecv before the MPI_Wait that completes it (the data
 * may not be there yet). Reported at the read, with the receive's line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, first = 0;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int *buf = malloc(16 * sizeof(int));
  if (rank == 0) {
    for (int i = 0; i < 16; i++) buf[i] = i + 1;
    MPI_Send(buf, 16, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Irecv(buf, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, &request);
    first = buf[0]; // expect: buffer-reuse rank=1
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    printf("got %d, read %d early\n", buf[0], first);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
