/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Origin buffers (MPI-4.0 §12.5.3, §12.7): rank 1 writes the origin
 * buffer of its MPI_Put under a lock before the MPI_Win_unlock that
 * completes it: buffer-reuse at the write. Twins:
 * lock_put_write_after_unlock.c, lock_put_flush_local_write.c. */
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
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: buffer-reuse rank=1
    value = 2; // expect: buffer-reuse rank=1
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("rank 0 holds %d\n", *base);
  if (rank == 1)
    printf("rank 1 got %d seen %d\n", got, seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
