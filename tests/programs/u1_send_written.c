/* mbhybrid-test: np=2 exit=1 */
/* Issue 19, seed 000 §2.3.6.3 (Fig 2.9), SCENARIOS.md E9: rank 0 writes a
 * 64 KiB send buffer (too big for the packed comparison at the wait) while
 * its MPI_Isend is pending. Reported at the write, with the send's line. */
#include <mpi.h>
#include <stdio.h>

#define N 8192 /* doubles: 64 KiB */

static double big[N];

int main(int argc, char **argv) {
  int rank;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int i = 0; i < N; i++) big[i] = i;
    MPI_Isend(big, N, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &request);
    big[N / 2] = -1.0; // expect: buffer-reuse rank=0
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(big, N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("got %g\n", big[N / 2]);
  }
  MPI_Finalize();
  return 0;
}
