/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Twin of rput_never_completed.c: rank 1 waits for its MPI_Rput's request
 * before the epoch ends. No finding; partial for passive target. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 5;
  MPI_Win win;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  MPI_Win_lock_all(0, win);
  if (rank == 1) {
    MPI_Rput(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
