/* mbhybrid-test: np=2 exit=0 */
/* Issue 16: polling loops that are no hang stay clean. Rank 0 polls a
 * receive nobody has sent yet a bounded number of times, gives up,
 * cancels it, and then sends to rank 1, which waited in MPI_Recv all
 * along; then rank 1 computes before it sends while rank 0 polls again.
 * Neither loop may be taken for a deadlock. */
#include <mpi.h>
#include <stdio.h>

static double spin(long n) {
  volatile double x = 0;
  for (long i = 0; i < n; i++)
    x += 1.0 / (double)(i + 1);
  return x;
}

int main(int argc, char **argv) {
  int rank, in = 0, out = 1, flag = 0, cancelled = 0;
  MPI_Request request;
  MPI_Status status;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&in, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &request);
    for (int i = 0; i < 5000 && !flag; i++)
      MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    if (!flag) {
      MPI_Cancel(&request);
      MPI_Wait(&request, &status);
      MPI_Test_cancelled(&status, &cancelled);
    }
    MPI_Send(&out, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    flag = 0;
    MPI_Irecv(&in, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &request);
    while (!flag)
      MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    printf("rank 0: gave up %d, then got %d\n", cancelled, in);
  } else {
    MPI_Recv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank 1: %.3f\n", spin(30000000) > 0 ? 1.0 : 0.0);
    MPI_Send(&out, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
