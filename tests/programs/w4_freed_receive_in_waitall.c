/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* A wildcard MPI_Irecv completes inside an MPI_Waitall that waits on
 * (a later message for the array's other receive), while a receive the
 * program freed (MPI_Request_free) completes: the runtime, finishing the
 * freed receive, must resolve the wildcard as matched (CompleteNow) with
 * the tag its message had, though MPI already freed its request. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, a = 0, b = 0, c = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int x = 1, y = 2, z = 3;
    MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Send(&y, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    usleep(300000); /* the freed receive completes while rank 1 waits */
    MPI_Send(&z, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Request r[2], freed;
    MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]); // wildcard
    MPI_Irecv(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &freed);
    MPI_Request_free(&freed);
    MPI_Irecv(&c, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    printf("a=%d c=%d\n", a, c);
  }
  MPI_Finalize();
  return 0;
}
