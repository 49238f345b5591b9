/* mbhybrid-test: np=2 exit=1 cflags=-O2 */
/* Built with -O2: the loop is entered with nothing pending, but a function
 * it calls starts an MPI_Isend of the buffer the next iteration writes.
 * Such a loop must not run unchecked: the write is found. */
#include <mpi.h>
#include <stdio.h>

#define N 1024

static double buf[N];
static MPI_Request request;

__attribute__((noinline)) static void start_send(void) {
  MPI_Isend(buf, N, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &request);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int step = 0; step < 2; step++) {
      if (step == 0)
        start_send();
      else
        buf[7] = 1.0; // expect: buffer-reuse rank=0
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(buf, N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("got %g\n", buf[7]);
  }
  MPI_Finalize();
  return 0;
}
