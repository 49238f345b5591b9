/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Rank 1's MPI_Rput request is never completed: MPI-4.0 §12.4.5 asks that
 * an R operation's request be completed (waited, tested or freed) like
 * any other, even when the epoch's end has completed the operation.
 * A request-leak (a warning) at the MPI_Rput; the run is partial for passive
 * target (window memory under locks), so verify exits 3. Twin: rput_waited.c. */
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
  if (rank == 1)
    MPI_Rput(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &request); // expect: request-leak rank=1
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
