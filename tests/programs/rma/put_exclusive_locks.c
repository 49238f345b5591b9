/* mbhybrid-test: np=3 exit=3 interleavings=1 */
/* Issue 39, remote races: ranks 1 and 2 MPI_Put to the same
 * int of rank 0's window, each under MPI_LOCK_EXCLUSIVE: the locks
 * serialize the two epochs (MPI-4.0 §12.5.3), no race.
 * put_shared_locks.c is the racy twin. Partial: window memory is not
 * watched under locks (passive target). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = 0;
  value = 10 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  } else if (rank == 2) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    printf("rank 0 holds %d\n", base[0]);
    MPI_Win_unlock(0, win);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
