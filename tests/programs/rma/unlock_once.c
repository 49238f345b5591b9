/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Issue 39: unlock_twice.c with one unlock per lock: no epoch error. */
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
    MPI_Win_unlock(0, win);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
