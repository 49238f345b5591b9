/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,10 */
/* Issue 39 (MPI-4.0 §12.2.5): rank 1 frees the window while it holds its
 * lock of rank 0. lock_released_before_free.c unlocks first. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, *base, one = 1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
