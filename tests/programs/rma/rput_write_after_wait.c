/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Twin of rput_write_before_wait.c: rank 1 writes the origin buffer after
 * the MPI_Wait that completes its MPI_Rput, still in the lock_all epoch.
 * No finding. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 1, got = -1, seen = -1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 40 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Request request;
  MPI_Win_lock_all(0, win);
  if (rank == 1) {
    MPI_Rput(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    value = 2;
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("rank 0 holds %d\n", *base);
  if (rank == 1)
    printf("rank 1 got %d seen %d\n", got, seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
