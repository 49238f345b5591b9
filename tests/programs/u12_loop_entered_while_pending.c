/* mbhybrid-test: np=2 exit=1 cflags=-O2 */
/* Built with -O2, where loops that cannot start an MPI operation run an
 * unchecked copy while nothing is pending: the first loop (before the
 * send) takes that copy, the second is entered while the MPI_Isend is
 * pending and must take the checked one, which finds its write. */
#include <mpi.h>
#include <stdio.h>

#define N 4096

static double big[N];

int main(int argc, char **argv) {
  int rank;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int i = 0; i < N; i++) big[i] = 0.5 * i;
    MPI_Isend(big, N, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &request);
    for (int i = 0; i < N; i += 64)
      big[i] += 1.0; // expect: buffer-reuse rank=0
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(big, N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("got %g\n", big[N - 1]);
  }
  MPI_Finalize();
  return 0;
}
